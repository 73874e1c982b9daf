#!/usr/bin/env python3
"""Writes the two number tables gymscope needs to match NeMo Gym v0.7.0's confidence intervals to
the last bit (`crates/gymscope-base/src/python_math.rs` reads them):

- `t975.bin`: scipy's `stats.t.ppf(0.975, df)` (Boost's Student-t quantile, not correctly rounded)
  for df 1 ... 100,000. df 1 ... 999 as float64 little-endian; df 1,000 ... 100,000 as the
  difference, in units in the last place, from a fourth-order Cornish-Fisher expansion computed with
  the same operations as `python_math::cornish_fisher_t975`, one signed 4-bit value each (low
  nibble first).
- `pow_half.bin`: the n <= 1,000,000 where CPython's `float(n) ** 0.5` (the C library's `pow`)
  differs from `math.sqrt(n)`: (n as u32 LE, the value as f64 LE) each.

Run with the Python of the v0.7.0 venv (`../shared/oracle/gym07-venv.sh` makes it), from the repo
root:  ~/.cache/gym07/bin/python scripts/parity-v07/tables.py
"""
import math
import struct
import sys
from pathlib import Path

import numpy as np
from scipy import stats

OUT = Path("crates/gymscope-base/data")
EXACT_BELOW = 1000
LAST_DF = 100_000
Z = 1.959963984540054  # the normal 0.975 quantile


def cornish_fisher_t975(df: float) -> float:
    # Explicit products only (no `**`, which calls pow): the Rust side repeats these operations.
    z = Z
    z2 = z * z
    z3 = z2 * z
    z5 = z3 * z2
    z7 = z5 * z2
    z9 = z7 * z2
    g1 = (z3 + z) / 4.0
    g2 = (5.0 * z5 + 16.0 * z3 + 3.0 * z) / 96.0
    g3 = (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / 384.0
    g4 = (79.0 * z9 + 776.0 * z7 + 1482.0 * z5 - 1920.0 * z3 - 945.0 * z) / 92160.0
    n2 = df * df
    return z + g1 / df + g2 / n2 + g3 / (n2 * df) + g4 / (n2 * n2)


def ulp_steps(a: float, b: float) -> int:
    """How many representable doubles lie from b to a (both positive)."""
    ia = struct.unpack("<q", struct.pack("<d", a))[0]
    ib = struct.unpack("<q", struct.pack("<d", b))[0]
    return ia - ib


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    t = stats.t.ppf(0.975, np.arange(1, LAST_DF + 1, dtype=np.float64))
    out = bytearray()
    for df in range(1, EXACT_BELOW):
        out += struct.pack("<d", float(t[df - 1]))
    nibbles = []
    for df in range(EXACT_BELOW, LAST_DF + 1):
        d = ulp_steps(float(t[df - 1]), cornish_fisher_t975(float(df)))
        if not -8 <= d <= 7:
            sys.exit(f"df {df}: {d} steps from the expansion, beyond a nibble")
        nibbles.append(d & 0xF)
    if len(nibbles) % 2:
        nibbles.append(0)
    for lo, hi in zip(nibbles[::2], nibbles[1::2]):
        out.append(lo | (hi << 4))
    (OUT / "t975.bin").write_bytes(bytes(out))

    pow_out = bytearray()
    for n in range(1, 1_000_001):
        p = float(n) ** 0.5
        if p != math.sqrt(n):
            pow_out += struct.pack("<Id", n, p)
    (OUT / "pow_half.bin").write_bytes(bytes(pow_out))
    print(f"t975.bin {len(out)} bytes, pow_half.bin {len(pow_out) // 12} values")


if __name__ == "__main__":
    main()

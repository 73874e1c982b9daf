//! The hash map of the read's hot paths (rollout keys, interned field names): foldhash instead of
//! std's SipHash, which perf put at 3 % of `gymscope profile`'s CPU. foldhash seeds itself per
//! process, so a file cannot be crafted to make every key collide.

pub type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

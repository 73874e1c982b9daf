//! One look at a followed run: the files asked for again, the appended bytes fed to the core's
//! incremental read, the page's profile refreshed when they grew, and when following ends.

use super::files::{self, CHUNK};
use super::{seconds, Refresh};
use crate::watch::{FileKind, Snapshot, Watch, HEAD_BYTES};
use wasm_bindgen::JsValue;

/// Following stops after this long without a new line in the rollouts (seconds).
const QUIET_STOP: f64 = 600.0;
/// A large run is profiled again at most once per this many bytes a second of it, so the
/// page's own share (laying the inspector out) stays a small part of its time.
const PROFILE_BYTES_PER_SECOND: f64 = 10e6;

/// The followed run between looks.
pub(super) struct Followed {
    /// Inputs, rollouts.
    handles: [JsValue; 2],
    watch: Watch,
    /// Where each file's last whole line read ends, and what the shown profile was made of.
    whole: [u64; 2],
    shown: [u64; 2],
    grew_at: f64,
    profiled_at: f64,
}

impl Followed {
    pub(super) fn new(names: &[String; 2], handles: [JsValue; 2]) -> Followed {
        let mut watch = Watch::default();
        watch.add_shard(names[1].clone(), names[0].clone(), String::new());
        Followed {
            handles,
            watch,
            whole: [0; 2],
            shown: [u64::MAX; 2],
            grew_at: seconds(),
            profiled_at: 0.0,
        }
    }

    /// One look: feeds what was appended, profiles again when the files grew, and gives the
    /// figures, or why following ends.
    pub(super) async fn step(
        &mut self,
        refresh: &Refresh,
    ) -> Result<Result<Snapshot, String>, String> {
        let now = seconds();
        let mut snapshots = Vec::with_capacity(2);
        for (i, kind) in [FileKind::Inputs, FileKind::Rollouts]
            .into_iter()
            .enumerate()
        {
            let file = files::file_of(&self.handles[i]).await?;
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let len = file.size() as u64;
            let head = files::read(&file, 0, len.min(HEAD_BYTES as u64)).await?;
            let mut at = self.watch.check(0, kind, len, None, &head);
            if at == 0 {
                self.whole[i] = 0; // read (again) from the start
            }
            // A megabyte at a time, each its own task: the page stays free between them.
            while at < len {
                let end = len.min(at + CHUNK);
                let bytes = files::read(&file, at, end).await?;
                if let Some(n) = bytes.iter().rposition(|b| *b == b'\n') {
                    self.whole[i] = at + n as u64 + 1;
                }
                self.watch.feed(0, kind, &bytes, now);
                at = end;
            }
            snapshots.push(file);
        }
        self.watch.tick(now);
        let figures = self.watch.snapshot(now);
        let changed = self.whole != self.shown;
        if changed {
            self.grew_at = now;
        }
        #[allow(clippy::cast_precision_loss)]
        let gap = self.whole[1] as f64 / PROFILE_BYTES_PER_SECOND;
        if changed && now - self.profiled_at >= gap {
            let cut = |i: usize| files::first_bytes(&snapshots[i], self.whole[i]);
            if refresh(cut(0)?, cut(1)?) {
                self.shown = self.whole;
                self.profiled_at = seconds();
            }
        }
        if self.whole == self.shown && figures.complete {
            return Ok(Err(
                "Stopped following: every materialized rollout has its row (the run is complete)."
                    .into(),
            ));
        }
        if now - self.grew_at > QUIET_STOP {
            return Ok(Err(format!(
                "Stopped following: the rollouts have not grown for {} min.",
                QUIET_STOP / 60.0
            )));
        }
        Ok(Ok(figures))
    }
}

/// "live · 12 rows/min · last row 4s ago · 210 of 360 rollouts".
pub(super) fn badge(s: &Snapshot) -> String {
    let rate = s
        .totals
        .rows_per_minute
        .map_or_else(|| "–".to_string(), |r| format!("{r:.0}"));
    let last = s
        .shards
        .first()
        .and_then(|s| s.seconds_since_last_row)
        .map_or_else(String::new, |t| format!(" · last row {t:.0}s ago"));
    #[allow(clippy::cast_possible_truncation)]
    let count = |n: u64| crate::figures::count(n as usize);
    let (done, expected) = (s.totals.done, s.totals.expected);
    format!(
        "live · {rate} rows/min{last} · {} of {} rollouts",
        count(done),
        count(expected)
    )
}

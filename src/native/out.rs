//! What every command prints goes through here, so a closed pipe (`gymscope health run.jsonl |
//! head`, `… 2>&1 | true`) ends the output quietly and never panics, as `println!` does.
//!
//! [`say!`](crate::say) / [`say_part!`](crate::say_part) write to stdout and [`note!`](crate::note)
//! to stderr; neither fails. A stdout write that fails for another reason than a closed pipe
//! (`> /dev/full`: no space left) is remembered, and [`finish`] turns it into the command's
//! error, so the output is never lost silently. Nothing can be said about a failing stderr.
//!
//! Everything printed passes [`terminal_safe`]: model-controlled text (agent and tool names,
//! answers quoted in messages) cannot move the cursor, clear the screen or write the clipboard
//! (OSC 52). A JSON document means the same after it (its escapes are JSON's).

use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt;
use std::io::{self, Write};
use std::sync::Mutex;

/// What commands print while a host captures it ([`capture`]): the Python module runs the
/// commands in its own process, where stdout and stderr are the host's.
static CAPTURED: Mutex<Option<Captured>> = Mutex::new(None);

/// A command's output, as it would have reached a pipe.
#[derive(Clone, Debug, Default)]
pub struct Captured {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// Runs `f` with what it prints captured instead of written (one capture at a time: the
/// caller serializes the commands it runs). Nothing is a terminal meanwhile.
pub fn capture<T>(f: impl FnOnce() -> T) -> (T, Captured) {
    if let Ok(mut c) = CAPTURED.lock() {
        *c = Some(Captured::default());
    }
    STDOUT_CLOSED.store(false, std::sync::atomic::Ordering::Relaxed);
    let out = f();
    let captured = CAPTURED.lock().ok().and_then(|mut c| c.take());
    (out, captured.unwrap_or_default())
}

thread_local! {
    /// What this thread prints while [`capture_thread`] runs: the Python module's reads print
    /// only from their calling thread, so two of them on two threads need not wait for each
    /// other (issue 57: one process-wide capture ran them one at a time).
    static THREAD_CAPTURED: RefCell<Option<Captured>> = const { RefCell::new(None) };
}

/// [`capture`] for what `f` prints on this thread only; other threads print as before. For
/// work that prints nothing from its worker threads (the Python module's reads and writes).
pub fn capture_thread<T>(f: impl FnOnce() -> T) -> (T, Captured) {
    THREAD_CAPTURED.with(|c| *c.borrow_mut() = Some(Captured::default()));
    let out = f();
    let captured = THREAD_CAPTURED.with(|c| c.borrow_mut().take());
    (out, captured.unwrap_or_default())
}

/// Whether a host is capturing the output ([`capture`], or [`capture_thread`] on this
/// thread): the process is the host's.
pub fn capturing() -> bool {
    THREAD_CAPTURED.with(|c| c.borrow().is_some()) || CAPTURED.lock().is_ok_and(|c| c.is_some())
}

/// `bytes` appended to the captured stdout or stderr; `false` when nothing captures.
fn to_capture(bytes: &[u8], stdout: bool) -> bool {
    let here = THREAD_CAPTURED.with(|c| match c.borrow_mut().as_mut() {
        Some(c) => {
            let to = if stdout { &mut c.stdout } else { &mut c.stderr };
            to.extend_from_slice(bytes);
            true
        }
        None => false,
    });
    if here {
        return true;
    }
    match CAPTURED.lock() {
        Ok(mut c) => match c.as_mut() {
            Some(c) => {
                let to = if stdout { &mut c.stdout } else { &mut c.stderr };
                to.extend_from_slice(bytes);
                true
            }
            None => false,
        },
        Err(_) => false,
    }
}

/// Whether stdout is a terminal (never while captured).
pub fn stdout_is_terminal() -> bool {
    use std::io::IsTerminal;
    !capturing() && io::stdout().is_terminal()
}

/// Whether stderr is a terminal (never while captured): progress bars are drawn only there.
pub fn stderr_is_terminal() -> bool {
    use std::io::IsTerminal;
    !capturing() && io::stderr().is_terminal()
}

/// The first stdout write error that was not a closed pipe.
static STDOUT_ERROR: Mutex<Option<io::Error>> = Mutex::new(None);

/// Stdout's reader is gone (`| head` has read enough): a command that streams its results can
/// stop reading its input.
static STDOUT_CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether a write to stdout met a closed pipe, or failed: nothing more printed will be read.
pub fn stdout_gone() -> bool {
    STDOUT_CLOSED.load(std::sync::atomic::Ordering::Relaxed)
        || STDOUT_ERROR.lock().is_ok_and(|e| e.is_some())
}

/// Writes to stdout; errors are kept for [`finish`] (a closed pipe is no error).
pub fn stdout(args: fmt::Arguments, newline: bool) {
    let mut text = args.to_string();
    if newline {
        text.push('\n');
    }
    if to_capture(&terminal_safe(text.as_bytes()), true) {
        return;
    }
    if let Err(e) = io::stdout()
        .lock()
        .write_all(&terminal_safe(text.as_bytes()))
    {
        remember(e);
    }
}

/// Writes a line whose untrusted parts have passed [`terminal_safe`] already, so that its own
/// styling (the query table's highlight) reaches the terminal.
pub fn stdout_styled_line(text: &str) {
    let mut line = text.as_bytes().to_vec();
    line.push(b'\n');
    if to_capture(&line, true) {
        return;
    }
    if let Err(e) = io::stdout().lock().write_all(&line) {
        remember(e);
    }
}

/// `text` made [`terminal_safe`], as a string.
pub fn terminal_safe_str(text: &str) -> Cow<'_, str> {
    match terminal_safe(text.as_bytes()) {
        Cow::Borrowed(_) => Cow::Borrowed(text),
        Cow::Owned(bytes) => Cow::Owned(String::from_utf8_lossy(&bytes).into_owned()),
    }
}

/// Writes `bytes` to stdout as they are when stdout is not a terminal (`query --format jsonl >
/// rows.jsonl` copies rows byte for byte), through [`terminal_safe`] when it is.
pub fn stdout_bytes(bytes: &[u8]) {
    use std::io::IsTerminal;
    if to_capture(bytes, true) {
        return;
    }
    let out = io::stdout();
    let shown = if out.is_terminal() {
        terminal_safe(bytes)
    } else {
        Cow::Borrowed(bytes)
    };
    if let Err(e) = out.lock().write_all(&shown) {
        remember(e);
    }
}

/// Writes to stderr; a closed or failing stderr is ignored (there is nowhere to say it).
pub fn stderr(args: fmt::Arguments) {
    let mut text = args.to_string();
    text.push('\n');
    if to_capture(&terminal_safe(text.as_bytes()), false) {
        return;
    }
    let _ = io::stderr()
        .lock()
        .write_all(&terminal_safe(text.as_bytes()));
}

/// `bytes` with every control character but newline and tab written as a visible escape
/// (`ESC` as `\u001b`, JSON's spelling, so a JSON string stays the same string): C0, DEL, and
/// C1 (U+0080–U+009F, which some terminals also obey and serde_json writes raw).
pub fn terminal_safe(bytes: &[u8]) -> Cow<'_, [u8]> {
    let unsafe_at = |i: usize| match bytes[i] {
        b'\n' | b'\t' => None,
        b if b < 0x20 || b == 0x7f => Some((u32::from(b), 1)),
        0xc2 if bytes.get(i + 1).is_some_and(|c| (0x80..=0x9f).contains(c)) => {
            Some((u32::from(bytes[i + 1]), 2))
        }
        _ => None,
    };
    if !(0..bytes.len()).any(|i| unsafe_at(i).is_some()) {
        return Cow::Borrowed(bytes);
    }
    let mut out = Vec::with_capacity(bytes.len() + 16);
    let mut i = 0;
    while i < bytes.len() {
        if let Some((code, len)) = unsafe_at(i) {
            out.extend_from_slice(format!("\\u{code:04x}").as_bytes());
            i += len;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Cow::Owned(out)
}

/// A `Write` to stdout with [`say!`](crate::say)'s rules, for code that writes to a writer.
pub struct Stdout;

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if to_capture(&terminal_safe(buf), true) {
            return Ok(buf.len());
        }
        if let Err(e) = io::stdout().lock().write_all(&terminal_safe(buf)) {
            remember(e);
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        if let Err(e) = io::stdout().lock().flush() {
            remember(e);
        }
        Ok(())
    }
}

/// A `Write` to stderr with [`note!`](crate::note)'s rules: it never fails.
pub struct Stderr;

impl Write for Stderr {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if to_capture(&terminal_safe(buf), false) {
            return Ok(buf.len());
        }
        let _ = io::stderr().lock().write_all(&terminal_safe(buf));
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        let _ = io::stderr().lock().flush();
        Ok(())
    }
}

/// Whether an error is a closed pipe: the reader is done (`| head`), which is not a failure.
pub fn is_closed_pipe(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe
}

fn remember(e: io::Error) {
    if is_closed_pipe(&e) {
        STDOUT_CLOSED.store(true, std::sync::atomic::Ordering::Relaxed);
        return;
    }
    if let Ok(mut first) = STDOUT_ERROR.lock() {
        first.get_or_insert(e);
    }
}

/// Flushes stdout; the first write error other than a closed pipe, if any.
pub fn finish() -> Result<(), io::Error> {
    if let Err(e) = io::stdout().lock().flush() {
        remember(e);
    }
    match STDOUT_ERROR.lock().ok().and_then(|mut e| e.take()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// `println!` that never panics: see [`crate::native::out`].
#[macro_export]
macro_rules! say {
    () => { $crate::native::out::stdout(format_args!(""), true) };
    ($($arg:tt)*) => { $crate::native::out::stdout(format_args!($($arg)*), true) };
}

/// `print!` that never panics: see [`crate::native::out`].
#[macro_export]
macro_rules! say_part {
    ($($arg:tt)*) => { $crate::native::out::stdout(format_args!($($arg)*), false) };
}

/// `eprintln!` that never panics: see [`crate::native::out`].
#[macro_export]
macro_rules! note {
    ($($arg:tt)*) => { $crate::native::out::stderr(format_args!($($arg)*)) };
}

#[cfg(test)]
mod tests {
    use super::{capture_thread, capturing, terminal_safe};

    #[test]
    fn a_thread_capture_takes_that_threads_output_only() {
        let (other, captured) = capture_thread(|| {
            crate::say!("mine");
            crate::note!("my note");
            // Another thread's capture, at the same time, gets its own output.
            let other = std::thread::spawn(|| capture_thread(|| crate::say!("theirs")).1);
            assert!(capturing());
            other.join().unwrap()
        });
        assert_eq!(captured.stdout, b"mine\n");
        assert_eq!(captured.stderr, b"my note\n");
        assert_eq!(other.stdout, b"theirs\n");
    }

    #[test]
    fn control_characters_are_shown_not_obeyed() {
        let text = "agent \u{1b}]52;c;aGk=\u{7}\u{1b}[2J\r\u{9b}31m ok\n\tnext é";
        let safe = terminal_safe(text.as_bytes());
        assert_eq!(
            std::str::from_utf8(&safe).unwrap(),
            "agent \\u001b]52;c;aGk=\\u0007\\u001b[2J\\u000d\\u009b31m ok\n\tnext é"
        );
        let plain = "no escapes\n{\"a\":\"\\u001b\"}\n";
        assert!(matches!(
            terminal_safe(plain.as_bytes()),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}

//! A minimal static file server on 127.0.0.1 for the browser tests (serves `dist/`), so the
//! tests need no Python or other server installed.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

pub struct StaticServer {
    pub port: u16,
    /// Requests served so far (the tests check the page makes none after loading).
    pub requests: Arc<AtomicUsize>,
    /// Their paths, in order, for messages.
    pub paths: Arc<Mutex<Vec<String>>>,
}

impl StaticServer {
    /// How many requests it has served so far.
    pub fn served(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }

    /// Stops the test unless it has served no request since it had served `loaded`; the message
    /// is `what` and the paths served.
    #[track_caller]
    pub fn assert_none_since(&self, loaded: usize, what: &str) {
        assert_eq!(
            self.served(),
            loaded,
            "{what}: {:?}",
            self.paths.lock().unwrap()
        );
    }

    pub fn start(root: &Path) -> StaticServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(AtomicUsize::new(0));
        let paths = Arc::new(Mutex::new(Vec::new()));
        let (root, counter, log) = (root.to_path_buf(), requests.clone(), paths.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (root, counter, log) = (root.clone(), counter.clone(), log.clone());
                std::thread::spawn(move || {
                    let _ = serve(stream, &root, &counter, &log);
                });
            }
        });
        StaticServer {
            port,
            requests,
            paths,
        }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/", self.port)
    }
}

fn serve(
    mut stream: TcpStream,
    root: &Path,
    counter: &AtomicUsize,
    log: &Mutex<Vec<String>>,
) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line)? == 0 {
            return Ok(());
        }
        let mut line = String::new();
        while reader.read_line(&mut line)? > 2 {
            line.clear();
        }
        let path = request_line.split_whitespace().nth(1).unwrap_or("/");
        log.lock().unwrap().push(path.to_string());
        counter.fetch_add(1, Ordering::SeqCst);
        let path = path.split(['?', '#']).next().unwrap_or("/");
        let rel = if path == "/" {
            "index.html"
        } else {
            path.trim_start_matches('/')
        };
        let file = root.join(rel);
        let inside = !rel.split('/').any(|part| part == "..");
        match std::fs::read(&file) {
            Ok(body) if inside => {
                let mime = match file.extension().and_then(|e| e.to_str()) {
                    Some("html") => "text/html; charset=utf-8",
                    Some("js") => "text/javascript",
                    Some("wasm") => "application/wasm",
                    Some("css") => "text/css",
                    _ => "application/octet-stream",
                };
                write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: {mime}\r\nContent-Length: {}\r\n\r\n",
                    body.len()
                )?;
                stream.write_all(&body)?;
            }
            _ => write!(
                stream,
                "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
            )?,
        }
    }
}

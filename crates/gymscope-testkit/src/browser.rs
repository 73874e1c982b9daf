//! Real headless Chromium driven over WebDriver (chromedriver), for the browser tests.

use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Browser {
    pub client: Client,
    driver: Child,
    profile_dir: PathBuf,
}

impl Browser {
    /// Starts chromedriver and a Chromium session. A session request can be reset when the
    /// machine is loaded or the free port we picked was taken meanwhile (seen on CI: "connection
    /// reset by peer"), so a failed start is tried again with a new driver on a new port.
    pub async fn start() -> Browser {
        let mut last = String::new();
        for _ in 0..3 {
            match Browser::try_start().await {
                Ok(browser) => return browser,
                Err(e) => last = e,
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        panic!("connect to chromedriver (3 tries): {last}")
    }

    async fn try_start() -> Result<Browser, String> {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let chromedriver = std::env::var("CHROMEDRIVER").unwrap_or_else(|_| "chromedriver".into());
        let mut driver = Command::new(&chromedriver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot start {chromedriver} ({e}): run scripts/setup.sh --browser")
            });
        let t0 = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if t0.elapsed() > Duration::from_secs(20) {
                let _ = driver.kill();
                let _ = driver.wait();
                return Err(format!(
                    "chromedriver did not listen on port {port} in 20 s"
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let profile_dir =
            std::env::temp_dir().join(format!("gymscope-chrome-{}-{port}", std::process::id()));
        let mut caps = serde_json::Map::new();
        caps.insert(
            "goog:chromeOptions".into(),
            serde_json::json!({
                "binary": std::env::var("CHROME_BIN").unwrap_or_else(|_| "/usr/bin/chromium".into()),
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    "--disable-dev-shm-usage", "--window-size=1200,900",
                    format!("--user-data-dir={}", profile_dir.display()),
                ]
            }),
        );
        let connected = ClientBuilder::new(HttpConnector::new())
            .capabilities(caps)
            .connect(&format!("http://127.0.0.1:{port}"))
            .await;
        match connected {
            Ok(client) => Ok(Browser {
                client,
                driver,
                profile_dir,
            }),
            Err(e) => {
                kill_driver(driver, &profile_dir);
                Err(e.to_string())
            }
        }
    }

    pub async fn close(self) {
        let _ = self.client.clone().close().await;
    }

    /// Waits until the element's text contains `want`, returning the text.
    pub async fn wait_text(&self, css: &str, want: &str) -> String {
        self.wait_text_for(css, want, 30).await
    }

    /// [`Browser::wait_text`] of `[data-testid=testid]`.
    pub async fn wait_testid(&self, testid: &str, want: &str) -> String {
        self.wait_text(&format!("[data-testid={testid}]"), want)
            .await
    }

    /// [`Browser::wait_text`] with a time limit in seconds.
    pub async fn wait_text_for(&self, css: &str, want: &str, seconds: u64) -> String {
        let t0 = Instant::now();
        loop {
            let text = match self.client.find(Locator::Css(css)).await {
                Ok(el) => el.text().await.unwrap_or_default(),
                Err(_) => String::new(),
            };
            if text.contains(want) {
                return text;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(seconds),
                "{css}: got {text:?}, want it to contain {want:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Waits until the app's background worker has loaded (its code is fetched with the page).
    pub async fn wait_worker_ready(&self) {
        let state = "const els = Array.from(document.querySelectorAll('[data-worker-state]')); return els.length > 0 && els.every(e => e.textContent === 'ready') ? 'ready' : ''";
        let t0 = Instant::now();
        while self.eval(state).await != "ready" {
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "the worker never became ready"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Runs a script and returns its JSON result.
    pub async fn eval(&self, script: &str) -> serde_json::Value {
        self.client
            .execute(script, vec![])
            .await
            .unwrap_or_else(|e| panic!("script failed: {e}\n{script}"))
    }

    pub async fn eval_async(&self, script: &str) -> serde_json::Value {
        self.client
            .execute_async(script, vec![])
            .await
            .unwrap_or_else(|e| panic!("script failed: {e}\n{script}"))
    }

    /// How many elements `css` selects.
    pub async fn count(&self, css: &str) -> u64 {
        self.eval(&format!("return document.querySelectorAll('{css}').length"))
            .await
            .as_u64()
            .unwrap()
    }

    /// Stops the test if a script planted in the data ran (it sets `window.__pwned`).
    pub async fn assert_no_script_ran(&self) {
        assert_eq!(
            self.eval("return window.__pwned === undefined").await,
            serde_json::json!(true)
        );
    }

    /// An exported page (the report, the comparison report) fetched nothing and its inline style
    /// applied under its own CSP (the body's 1400 px width).
    pub async fn assert_self_contained(&self) {
        assert_eq!(
            self.eval("return performance.getEntriesByType('resource').length")
                .await,
            serde_json::json!(0)
        );
        assert_eq!(
            self.eval("return getComputedStyle(document.body).maxWidth")
                .await,
            serde_json::json!("1400px")
        );
    }

    /// Clicks the element `css` names.
    pub async fn click(&self, css: &str) {
        self.client
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|_| panic!("no element {css}"))
            .click()
            .await
            .unwrap();
    }

    /// Clicks `[data-testid=testid]`.
    pub async fn click_testid(&self, testid: &str) {
        self.click(&format!("[data-testid={testid}]")).await;
    }

    /// Replaces the text of the input `[data-testid=testid]` with `value`, as typed.
    pub async fn set_text(&self, testid: &str, value: &str) {
        let el = self.testid(testid).await;
        el.clear().await.unwrap();
        el.send_keys(value).await.unwrap();
    }

    /// The element `[data-testid=testid]` (stops the test when there is none).
    pub async fn testid(&self, testid: &str) -> fantoccini::elements::Element {
        self.client
            .find(Locator::Css(&format!("[data-testid={testid}]")))
            .await
            .unwrap()
    }

    /// Chooses several files at once in an `<input type=file multiple>`.
    pub async fn choose_files(&self, testid: &str, files: &[PathBuf]) {
        let paths: Vec<&str> = files.iter().map(|p| p.to_str().unwrap()).collect();
        self.type_into(testid, &paths.join("\n")).await;
    }

    /// Opens the built app served at `base` and waits for its workers.
    pub async fn open_app(&self, base: &str, hash: &str) {
        self.client.goto(&format!("{base}{hash}")).await.unwrap();
        self.wait_worker_ready().await;
    }

    /// Loads the app's example run from its first screen and waits for its profile.
    pub async fn load_example(&self) {
        self.click_testid("load-example").await;
        self.wait_testid("status", "Profile ready").await;
    }

    /// The text of the file a download link (`[data-testid=testid]`) offers, once the link is
    /// there: a profile's output files are written after it is shown.
    pub async fn download_text(&self, testid: &str) -> String {
        let script = format!(
            "const done = arguments[arguments.length - 1];
             const t0 = Date.now();
             (function poll() {{
               const a = document.querySelector('[data-testid={testid}]');
               if (a) return fetch(a.href).then(r => r.text()).then(done, e => done('ERR ' + e));
               if (Date.now() - t0 > 25000) return done('ERR no link');
               setTimeout(poll, 50);
             }})();"
        );
        self.eval_async(&script).await.as_str().unwrap().to_string()
    }

    /// [`Browser::wait_testid`], then stops the test unless the text also holds `also`.
    pub async fn wait_testid_holding(&self, testid: &str, want: &str, also: &str) -> String {
        let text = self.wait_testid(testid, want).await;
        assert!(text.contains(also), "{text}");
        text
    }

    /// [`Browser::wait_text`], then stops the test unless the text also holds `also`.
    pub async fn wait_text_holding(&self, css: &str, want: &str, also: &str) -> String {
        let text = self.wait_text(css, want).await;
        assert!(text.contains(also), "{text}");
        text
    }

    /// Types `text` into the field `testid` (after what it holds).
    pub async fn type_into(&self, testid: &str, text: &str) {
        self.testid(testid).await.send_keys(text).await.unwrap();
    }

    /// Stops the test if a script planted in the data ran or if `css` matches anything.
    pub async fn assert_inert(&self, css: &str) {
        self.assert_no_script_ran().await;
        assert_eq!(self.count(css).await, 0, "{css}");
    }

    /// Opens the first task's first rollout (from the task table) and waits for its view to
    /// show `want`; the view's text.
    pub async fn open_first_rollout(&self, want: &str) -> String {
        self.click("[data-testid=task-row]").await;
        self.click("[data-testid=open-rollout]").await;
        self.wait_testid("rollout-view", want).await
    }

    /// The value of `script`, which must be a string.
    pub async fn eval_str(&self, script: &str) -> String {
        self.eval(script).await.as_str().unwrap().to_string()
    }

    /// Goes to `url` and reloads it (a fresh page with that address), its worker ready.
    pub async fn reload_at(&self, url: &str) {
        self.client.goto(url).await.unwrap();
        self.client.refresh().await.unwrap();
        self.wait_worker_ready().await;
    }

    /// The text behind the link `testid` as it is now (a `blob:` URL), fetched by the page.
    pub async fn link_text(&self, testid: &str) -> String {
        let script = format!(
            "const done = arguments[arguments.length - 1];
             fetch(document.querySelector('[data-testid={testid}]').href).then(r => r.text()).then(done);"
        );
        self.eval_async(&script).await.as_str().unwrap().to_string()
    }

    /// Chooses a file in an `<input type=file>` (what a person picking a file does).
    pub async fn choose_file(&self, testid: &str, path: &std::path::Path) {
        self.type_into(testid, path.to_str().unwrap()).await;
    }
}

/// `dist/` served, a browser started and the app opened at `hash` (`""` for its first page).
pub async fn start_app(hash: &str) -> (crate::static_server::StaticServer, Browser) {
    start(hash, None).await
}

/// [`start_app`] in a window `width` × `height` pixels large from the start.
pub async fn start_app_sized(
    hash: &str,
    width: u32,
    height: u32,
) -> (crate::static_server::StaticServer, Browser) {
    start(hash, Some((width, height))).await
}

async fn start(
    hash: &str,
    size: Option<(u32, u32)>,
) -> (crate::static_server::StaticServer, Browser) {
    let server = crate::static_server::StaticServer::start(&dist());
    let b = Browser::start().await;
    if let Some((width, height)) = size {
        b.client.set_window_size(width, height).await.unwrap();
    }
    b.open_app(&server.url(), hash).await;
    (server, b)
}

/// The built app (`scripts/trunk.sh build --release`).
pub fn dist() -> PathBuf {
    let dist = crate::repo_root().join("dist");
    assert!(
        dist.join("index.html").exists(),
        "dist/ is missing: scripts/trunk.sh build --release"
    );
    dist
}

impl Drop for Browser {
    fn drop(&mut self) {
        stop_driver(&mut self.driver, &self.profile_dir);
    }
}

fn kill_driver(mut driver: Child, profile_dir: &std::path::Path) {
    stop_driver(&mut driver, profile_dir);
}

/// Killing chromedriver can orphan its Chromium; kill the one using our profile too.
fn stop_driver(driver: &mut Child, profile_dir: &std::path::Path) {
    let _ = driver.kill();
    let _ = driver.wait();
    let pattern = profile_dir.to_str().unwrap();
    let _ = Command::new("pkill").arg("-f").arg(pattern).status();
    // Chromium writes into its profile while it shuts down: a folder removed before its last
    // process has gone comes back (38 were left in /tmp after a day of test runs). Wait for the
    // processes (up to 5 s, then SIGKILL), then remove it.
    let t0 = Instant::now();
    while Command::new("pgrep")
        .arg("-f")
        .arg(pattern)
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
    {
        if t0.elapsed() > Duration::from_secs(5) {
            let _ = Command::new("pkill").args(["-9", "-f", pattern]).status();
            std::thread::sleep(Duration::from_millis(200));
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    for _ in 0..3 {
        if std::fs::remove_dir_all(profile_dir).is_ok() || !profile_dir.exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

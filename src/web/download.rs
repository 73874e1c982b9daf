//! Files offered for download as `blob:` URLs (nothing leaves the machine). gloo's `ObjectUrl`
//! revokes the URL when the last handle is dropped.

use crate::web::protocol::Download;
use gloo_file::ObjectUrl;
use leptos::prelude::*;

/// A profiled run's output files: none (the run was read from them), being written (the
/// profile is shown first), ready, or why not.
#[derive(Clone)]
pub enum OutputFiles {
    None,
    Writing,
    Ready(Vec<DownloadLink>),
    Failed(String),
}

/// A file ready to save: its `blob:` URL, the name to save it under, its size.
#[derive(Clone)]
pub struct DownloadLink {
    pub name: String,
    pub url: ObjectUrl,
    pub bytes: u64,
}

impl From<Download> for DownloadLink {
    fn from(d: Download) -> DownloadLink {
        DownloadLink {
            bytes: d.blob.size() as u64,
            url: ObjectUrl::from(d.blob),
            name: d.name,
        }
    }
}

impl DownloadLink {
    /// `<a download>` with `label` as its text.
    /// Saves the file now, as a click on its link would (the browser's download), so one
    /// press of "Export report" gives the file (issue 44, item 8); the link stays to save again.
    pub fn save(&self) {
        use wasm_bindgen::JsCast;
        let Ok(a) = gloo_utils::document().create_element("a") else {
            return;
        };
        let Ok(a) = a.dyn_into::<web_sys::HtmlAnchorElement>() else {
            return;
        };
        a.set_href(&self.url);
        a.set_download(&self.name);
        a.click();
    }

    pub fn anchor(&self, testid: &'static str, label: String) -> impl IntoView {
        view! { <a href=self.url.to_string() download=self.name.clone() data-testid=testid>{label}</a> }
    }
}

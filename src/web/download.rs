//! Output files offered for download as `blob:` URLs (nothing leaves the machine).

/// A `blob:` URL with the file name to save it under; revoked when dropped.
pub struct ObjectUrl {
    pub file_name: String,
    pub url: String,
    pub bytes: usize,
}

impl ObjectUrl {
    /// For a Blob made elsewhere (the worker's fixed copy).
    pub fn from_blob(file_name: String, blob: &web_sys::Blob) -> Result<Self, String> {
        let url = web_sys::Url::create_object_url_with_blob(blob).map_err(|e| format!("{e:?}"))?;
        Ok(ObjectUrl {
            file_name,
            url,
            bytes: blob.size() as usize,
        })
    }
}

impl Drop for ObjectUrl {
    fn drop(&mut self) {
        let _ = web_sys::Url::revoke_object_url(&self.url);
    }
}

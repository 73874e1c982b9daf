//! Output files offered for download as `blob:` URLs (nothing leaves the machine).

/// A `blob:` URL with the file name to save it under; revoked when dropped.
pub struct ObjectUrl {
    pub file_name: String,
    pub url: String,
    pub bytes: usize,
}

impl ObjectUrl {
    pub fn new(file_name: String, bytes: &[u8], mime: &str) -> Result<Self, String> {
        let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes));
        let options = web_sys::BlobPropertyBag::new();
        options.set_type(mime);
        let blob = web_sys::Blob::new_with_u8_array_sequence_and_options(&parts, &options)
            .map_err(|e| format!("{e:?}"))?;
        let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(|e| format!("{e:?}"))?;
        Ok(ObjectUrl {
            file_name,
            url,
            bytes: bytes.len(),
        })
    }
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

//! The `check` result cache, on the model of ruff's: on by default, one JSON entry per file
//! in a cache directory (`.staticfx-cache` beside the pyproject.toml that configures
//! staticfx, else in the current directory), keyed by content hashes.
//!
//! An entry's name is the SHA-256 of what is known before analysing: the binary, the
//! catalogue, the file's path and text, and the settings that change findings. What the
//! analysis read besides the file (its imports) is only known after, so the entry records
//! each of those files with the hash of its text, and a lookup is a hit only while every one
//! still has that text. Files the analysis looked for and did not find are not recorded: a
//! module created later where an import used to fail, or a `.venv` created later beside the
//! root, is not noticed (`--no-cache` is the way out).
//!
//! Writes go to a temporary file in the same directory and are renamed into place, so
//! concurrent checks of one tree see an old entry or a whole new one. An entry that does not
//! parse or belongs to another key or binary is a miss and is overwritten.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::Settings;

/// The directory name, as ruff's `.ruff_cache`.
pub const DEFAULT_DIR: &str = ".staticfx-cache";
/// Overrides the directory, as `--cache-dir` does.
pub const DIR_ENV: &str = "STATICFX_CACHE_DIR";
/// Bumped when the entry layout or the meaning of a cached value changes.
const FORMAT: u32 = 2;

pub struct CheckCache {
    dir: PathBuf,
    binary: String,
    /// Hashes of the files entries depend on, read once per run: many files import the
    /// same modules.
    hashes: Mutex<HashMap<PathBuf, Option<String>>>,
}

#[derive(Serialize, Deserialize)]
struct Entry<T> {
    format: u32,
    binary: String,
    key: String,
    /// Every other file the analysis read, with the hash of the text it read.
    depends_on: Vec<(PathBuf, String)>,
    value: T,
}

/// Where `check` caches by default: `STATICFX_CACHE_DIR`, else `.staticfx-cache` beside the
/// pyproject.toml that configures staticfx, else in the current directory.
pub fn default_dir(settings: &Settings) -> PathBuf {
    if let Some(dir) = std::env::var_os(DIR_ENV).filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let base = settings
        .config_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("."));
    base.join(DEFAULT_DIR)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn text_hash(text: &str) -> String {
    hex(&Sha256::digest(text.as_bytes()))
}

/// Which build wrote an entry: the version, the catalogue, and the executable's size and
/// modification time, so a rebuilt binary with new rules does not read old findings.
fn binary_id() -> String {
    let exe = std::env::current_exe()
        .ok()
        .and_then(|p| std::fs::metadata(p).ok())
        .map(|m| {
            let mtime = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            format!("{}-{mtime}", m.len())
        })
        .unwrap_or_default();
    format!(
        "{}-{}-{exe}",
        env!("CARGO_PKG_VERSION"),
        crate::catalog::Catalog::fingerprint()
    )
}

impl CheckCache {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        CheckCache {
            dir: dir.into(),
            binary: binary_id(),
            hashes: Mutex::default(),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The name of `path`'s entry given its text and the settings: everything but its imports.
    pub fn key(&self, path: &Path, text: &str, settings: &Settings) -> String {
        let mut h = Sha256::new();
        // Length-prefixed fields: no two different inputs concatenate to the same bytes.
        let mut field = |b: &[u8]| {
            h.update((b.len() as u64).to_le_bytes());
            h.update(b);
        };
        field(b"staticfx-check-cache");
        field(&FORMAT.to_le_bytes());
        field(self.binary.as_bytes());
        field(path.to_string_lossy().as_bytes());
        field(text.as_bytes());
        // select/ignore are applied before caching; root and example inputs change the analysis.
        field(format!("{:?}", settings.select).as_bytes());
        field(format!("{:?}", settings.ignore).as_bytes());
        field(format!("{:?}", settings.root).as_bytes());
        // What picks the Python environment imports resolve through (its files are recorded
        // by hash like any import; see `semantic::environment::DiscoveryRequest`).
        field(format!("{:?}", settings.python).as_bytes());
        // The torch whose Dynamo the findings describe: configured, or the installed one.
        let root = settings
            .root
            .clone()
            .unwrap_or_else(|| crate::semantic::Project::default_root(path));
        field(
            settings
                .torch_target_for(&root)
                .version
                .to_string()
                .as_bytes(),
        );
        for var in ["VIRTUAL_ENV", "PATH"] {
            field(std::env::var_os(var).unwrap_or_default().as_encoded_bytes());
        }
        let mut inputs: Vec<String> = settings
            .example_inputs
            .iter()
            .map(|(class, specs)| format!("{class}={specs:?}"))
            .collect();
        inputs.sort();
        for i in &inputs {
            field(i.as_bytes());
        }
        hex(&h.finalize())
    }

    fn entry_path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.json"))
    }

    fn current_hash(&self, path: &Path) -> Option<String> {
        if let Some(h) = self.hashes.lock().unwrap().get(path) {
            return h.clone();
        }
        let h = crate::semantic::project::read_lossy(path)
            .ok()
            .map(|t| text_hash(&t));
        self.hashes
            .lock()
            .unwrap()
            .insert(path.to_path_buf(), h.clone());
        h
    }

    /// The cached value under `key`, if its entry is whole, from this binary, and every file
    /// it depends on still has the text it had.
    pub fn get<T: DeserializeOwned>(&self, key: &str) -> Option<T> {
        self.get_over(key, &[])
    }

    /// Like [`get`](Self::get), where a file it depends on that is among `overlays` (path
    /// and text, sorted by path: an editor's open buffers) has to have the overlay's text
    /// instead of the disk's.
    pub fn get_over<T: DeserializeOwned>(
        &self,
        key: &str,
        overlays: &[(PathBuf, std::sync::Arc<str>)],
    ) -> Option<T> {
        let bytes = std::fs::read(self.entry_path(key)).ok()?;
        let entry: Entry<T> = serde_json::from_slice(&bytes).ok()?;
        if entry.format != FORMAT || entry.binary != self.binary || entry.key != key {
            return None;
        }
        entry
            .depends_on
            .iter()
            .all(
                |(p, h)| match overlays.binary_search_by(|(o, _)| o.as_path().cmp(p)) {
                    Ok(i) => text_hash(&overlays[i].1) == *h,
                    Err(_) => self.current_hash(p).as_deref() == Some(h.as_str()),
                },
            )
            .then_some(entry.value)
    }

    /// Stores `value` under `key`, depending on `read` (path and text of every file the
    /// analysis read; the checked file itself may be among them) and on `scanned` (files
    /// whose text it searched without loading them, hashed as they are now: each run hashes
    /// one once, where hundreds of entries may name it).
    pub fn put<T: Serialize>(
        &self,
        key: &str,
        checked: &Path,
        read: &[(PathBuf, &str)],
        scanned: &[PathBuf],
        value: &T,
    ) -> std::io::Result<()> {
        let mut depends_on: Vec<(PathBuf, String)> = read
            .iter()
            .filter(|(p, _)| p != checked)
            .map(|(p, t)| (p.clone(), text_hash(t)))
            .collect();
        depends_on.extend(
            (scanned.iter())
                .filter(|p| *p != checked)
                .filter_map(|p| Some((p.clone(), self.current_hash(p)?))),
        );
        depends_on.sort();
        depends_on.dedup();
        let entry = Entry {
            format: FORMAT,
            binary: self.binary.clone(),
            key: key.to_string(),
            depends_on,
            value,
        };
        let json = serde_json::to_vec(&entry).map_err(std::io::Error::other)?;
        self.ensure_dir()?;
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let tmp = self.dir.join(format!(
            "{key}.tmp{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let written = (|| {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(&json)?;
            drop(f);
            std::fs::rename(&tmp, self.entry_path(key))
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written
    }

    /// Creates the directory with ruff's markers: a `.gitignore` that ignores it all and a
    /// CACHEDIR.TAG for backup tools.
    fn ensure_dir(&self) -> std::io::Result<()> {
        if self.dir.join(".gitignore").exists() {
            return Ok(());
        }
        std::fs::create_dir_all(&self.dir)?;
        let _ = std::fs::write(
            self.dir.join(".gitignore"),
            "# Automatically created by staticfx.\n*\n",
        );
        let _ = std::fs::write(
            self.dir.join("CACHEDIR.TAG"),
            "Signature: 8a477f597d28d172789f06886806bc55\n",
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hit_needs_the_same_text_and_the_same_imports() {
        let dir = tempfile::tempdir().unwrap();
        let dep = dir.path().join("dep.py");
        std::fs::write(&dep, "X = 1\n").unwrap();
        let file = dir.path().join("m.py");
        let cache = CheckCache::new(dir.path().join("cache"));
        let settings = Settings::default();
        let key = cache.key(&file, "import dep\n", &settings);
        assert_eq!(cache.get::<Vec<String>>(&key), None);
        cache
            .put(
                &key,
                &file,
                &[(file.clone(), "import dep\n"), (dep.clone(), "X = 1\n")],
                &[],
                &vec!["a".to_string()],
            )
            .unwrap();
        assert_eq!(cache.get::<Vec<String>>(&key), Some(vec!["a".to_string()]));
        assert_ne!(cache.key(&file, "import dep \n", &settings), key);
        let mut ignoring = Settings::default();
        ignoring.ignore = vec!["FX1".into()];
        assert_ne!(cache.key(&file, "import dep\n", &ignoring), key);
        let mut elsewhere = Settings::default();
        elsewhere.python = Some(dir.path().join("venv"));
        assert_ne!(cache.key(&file, "import dep\n", &elsewhere), key);
        std::fs::write(&dep, "X = 2\n").unwrap();
        // A fresh cache (a new run) reads the dependency again.
        let next_run = CheckCache::new(dir.path().join("cache"));
        assert_eq!(next_run.get::<Vec<String>>(&key), None);
    }

    #[test]
    fn a_corrupt_entry_is_a_miss_and_is_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let cache = CheckCache::new(dir.path());
        let file = dir.path().join("m.py");
        let key = cache.key(&file, "x = 1\n", &Settings::default());
        std::fs::write(cache.entry_path(&key), b"{\"format\": 1, \"bin").unwrap();
        assert_eq!(cache.get::<u32>(&key), None);
        std::fs::write(cache.entry_path(&key), b"\xff\xfe not json").unwrap();
        assert_eq!(cache.get::<u32>(&key), None);
        cache.put(&key, &file, &[], &[], &7u32).unwrap();
        assert_eq!(cache.get::<u32>(&key), Some(7));
        // An entry from another binary under the same name is a miss too.
        let text = std::fs::read_to_string(cache.entry_path(&key)).unwrap();
        std::fs::write(
            cache.entry_path(&key),
            text.replace(&cache.binary, "0.0.0-other"),
        )
        .unwrap();
        assert_eq!(cache.get::<u32>(&key), None);
    }
}

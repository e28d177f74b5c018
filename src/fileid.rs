//! The identity of an input file: its length, modification time and 64-bit FNV-1a hash of its
//! bytes, and a reader that hashes what it reads, so that a run can tell whether the file it
//! read as it went is the file it checked (and the file its manifest names).
//!
//! A run reads a streamed flow file while it runs; a file truncated, rewritten or appended to
//! in that time would otherwise be simulated half old, half new. [`HashingReader::ident`]
//! records what a reader saw; [`FileIdent::matches_now`] compares it with the file now.
//!
//! Not done: cryptographic hashing (FNV-1a detects edits, it does not resist forgery), and
//! change detection finer than the file system's modification time (the hash covers that).

use std::io::Read;
use std::path::Path;
use std::time::SystemTime;

/// FNV-1a's offset basis.
const FNV_BASIS: u64 = 0xcbf2_9ce4_8422_2325;

/// 64-bit FNV-1a.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    fnv1a_from(FNV_BASIS, bytes)
}

/// FNV-1a continued from state `h` over `bytes`.
pub fn fnv1a_from(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Checks that `path` names a regular file (following links) before it is opened: opening a
/// named pipe blocks until something writes into it, and a device or a directory is no input.
pub fn regular(path: &Path) -> Result<(), String> {
    let m = std::fs::metadata(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if m.is_file() {
        return Ok(());
    }
    let what = if m.is_dir() {
        "a directory"
    } else {
        "a named pipe, a socket or a device"
    };
    Err(format!(
        "{}: is {what}, not a regular file (inputs are read more than once, so they must be files)",
        path.display()
    ))
}

/// The text of the regular file `path` ([`regular`]).
pub fn read_to_string(path: &Path) -> Result<String, String> {
    regular(path)?;
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// A file's identity: length, modification time, hash of its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileIdent {
    pub len: u64,
    pub mtime: Option<SystemTime>,
    pub hash: u64,
}

impl FileIdent {
    /// The identity of file `path` now, read through once.
    pub fn of(path: &Path) -> std::io::Result<FileIdent> {
        let mut r = HashingReader::open(path)?;
        std::io::copy(&mut r, &mut std::io::sink())?;
        Ok(r.ident())
    }

    /// Whether file `path` still has this length and modification time (without reading it),
    /// and if not, what differs.
    pub fn matches_now(&self, path: &Path) -> Result<(), String> {
        let m = std::fs::metadata(path)
            .map_err(|e| format!("{}: cannot read it any more: {e}", path.display()))?;
        if m.len() != self.len {
            return Err(format!(
                "{}: its length changed from {} to {} bytes",
                path.display(),
                self.len,
                m.len()
            ));
        }
        if m.modified().ok() != self.mtime {
            return Err(format!("{}: its modification time changed", path.display()));
        }
        Ok(())
    }

    /// The hash as written in manifests (16 hex digits).
    pub fn hex(&self) -> String {
        format!("{:016x}", self.hash)
    }
}

/// A file reader that hashes every byte it reads, with the file's length and modification
/// time when it was opened.
#[derive(Debug)]
pub struct HashingReader {
    file: std::fs::File,
    hash: u64,
    read: u64,
    /// Length and modification time at opening.
    len: u64,
    mtime: Option<SystemTime>,
}

impl HashingReader {
    pub fn open(path: &Path) -> std::io::Result<HashingReader> {
        regular(path).map_err(std::io::Error::other)?;
        let file = std::fs::File::open(path)?;
        let m = file.metadata()?;
        Ok(HashingReader {
            len: m.len(),
            mtime: m.modified().ok(),
            file,
            hash: FNV_BASIS,
            read: 0,
        })
    }

    /// Reads the rest of the file, hashing it.
    pub fn drain(&mut self) -> std::io::Result<()> {
        std::io::copy(self, &mut std::io::sink()).map(|_| ())
    }

    /// What was read so far: its length and hash, with the length and modification time the
    /// file had when it was opened. Equal to [`FileIdent::of`] the file when the reader has
    /// reached the end and the file did not change.
    pub fn ident(&self) -> FileIdent {
        FileIdent {
            len: self.read,
            mtime: self.mtime,
            hash: self.hash,
        }
    }

    /// The file's length when it was opened.
    pub fn opened_len(&self) -> u64 {
        self.len
    }
}

impl Read for HashingReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let k = self.file.read(buf)?;
        self.hash = fnv1a_from(self.hash, &buf[..k]);
        self.read += k as u64;
        Ok(k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_s_identity_is_the_file_s_and_sees_a_change() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f.txt");
        let bytes: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&p, &bytes).unwrap();
        let id = FileIdent::of(&p).unwrap();
        assert_eq!(id.hash, fnv1a(&bytes));
        assert_eq!(id.len, bytes.len() as u64);
        assert!(id.matches_now(&p).is_ok());
        let mut r = HashingReader::open(&p).unwrap();
        let mut half = vec![0u8; 1000];
        r.read_exact(&mut half).unwrap();
        assert_eq!(r.ident().hash, fnv1a(&bytes[..1000]));
        r.drain().unwrap();
        assert_eq!(r.ident(), id);
        // Appended to: the length differs.
        std::fs::write(&p, [&bytes[..], b"x"].concat()).unwrap();
        let e = id.matches_now(&p).unwrap_err();
        assert!(e.contains("length changed"), "{e}");
        assert_ne!(FileIdent::of(&p).unwrap().hash, id.hash);
    }
}

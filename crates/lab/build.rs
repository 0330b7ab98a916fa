//! Compiles the bundled sample world into the binary.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a build script fails the build by panicking, with its message

use std::path::Path;

fn main() {
    embed_sample_world();
}

/// The bundled sample world, compiled into the binary (`lake::sample_world_dir` writes it out
/// where the user's data lives): an installed binary, or a copy of the checkout, never reads the
/// checkout it was built from. With a digest of its paths and bytes (FNV-1a), which names the
/// copy, so a new sample is a new folder.
fn embed_sample_world() {
    let root = Path::new("../../sample-data");
    println!("cargo:rerun-if-changed=../../sample-data");
    let mut files = Vec::new();
    walk(root, root, &mut files);
    files.sort();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut fnv = |bytes: &[u8]| {
        for b in bytes {
            hash ^= u64::from(*b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    };
    let mut entries = Vec::new();
    for rel in &files {
        let path = root.join(rel).canonicalize().expect("a sample file");
        fnv(rel.as_bytes());
        fnv(&[0]);
        fnv(&std::fs::read(&path).expect("reading a sample file"));
        entries.push(format!("({rel:?}, include_bytes!({:?}))", path.display().to_string()));
    }
    let out = format!(
        "/// The sample world's digest: its paths and bytes.\npub(crate) const SAMPLE_WORLD_DIGEST: &str = \"{hash:016x}\";\n\
         /// Every file of the sample world, by its path under the world.\npub(crate) static SAMPLE_WORLD: &[(&str, &[u8])] = &[{}];\n",
        entries.join(", ")
    );
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap()).join("sample_world.rs");
    std::fs::write(dest, out).expect("writing sample_world.rs");
}

/// Every file under `dir`, by its path relative to `root` (with `/`).
fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).expect("reading sample-data/") {
        let path = entry.expect("a sample-data/ entry").path();
        if path.is_dir() {
            walk(root, &path, out);
        } else {
            let rel = path.strip_prefix(root).unwrap().to_str().expect("a UTF-8 sample path").to_string();
            out.push(rel);
        }
    }
}

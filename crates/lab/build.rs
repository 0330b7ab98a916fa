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
    // Each file is copied into OUT_DIR and included from there, never from the checkout's own
    // path: a target directory shared by two checkouts (CI's clone and a working copy) would
    // otherwise keep a generated file that names the other checkout's paths, which cargo does not
    // see as stale when that checkout is gone.
    let out_dir = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let copies = out_dir.join("sample");
    std::fs::create_dir_all(&copies).expect("making OUT_DIR/sample");
    let mut entries = Vec::new();
    for (i, rel) in files.iter().enumerate() {
        let bytes = std::fs::read(root.join(rel)).expect("reading a sample file");
        fnv(rel.as_bytes());
        fnv(&[0]);
        fnv(&bytes);
        std::fs::write(copies.join(format!("{i}.bin")), &bytes).expect("copying a sample file");
        entries.push(format!("({rel:?}, include_bytes!(concat!(env!(\"OUT_DIR\"), \"/sample/{i}.bin\")))"));
    }
    let out = format!(
        "/// The sample world's digest: its paths and bytes.\npub(crate) const SAMPLE_WORLD_DIGEST: &str = \"{hash:016x}\";\n\
         /// Every file of the sample world, by its path under the world.\npub(crate) static SAMPLE_WORLD: &[(&str, &[u8])] = &[{}];\n",
        entries.join(", ")
    );
    let dest = out_dir.join("sample_world.rs");
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

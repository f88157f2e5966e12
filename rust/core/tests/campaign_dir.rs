//! Campaign files named by untrusted callers (`campaign::dir`), on real files: real symlinks in
//! and out of the directory, a real FIFO, a file over the size limit, JSON that is not a
//! campaign. Every refusal leaves the files outside (and the refused file) byte for byte as they
//! were, and nothing waits on a FIFO.

#![cfg(unix)]

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use agents_core::campaign::dir::{CampaignDir, CampaignFile};
use agents_core::campaign::turn::TurnEntry;
use agents_core::campaign::{Campaign, CampaignError, file};
use agents_core::limits::MAX_CAMPAIGN_FILE_BYTES;
use serde_json::json;

/// A campaign directory holding `camp/campaign.json`, and a directory beside it (outside)
/// holding a campaign of its own and a file that is not JSON.
struct Dirs {
    _temp: tempfile::TempDir,
    inside: PathBuf,
    outside: PathBuf,
}

impl Dirs {
    fn new() -> Dirs {
        let temp = tempfile::tempdir().unwrap();
        let inside = temp.path().join("campaigns");
        let outside = temp.path().join("elsewhere");
        fs::create_dir_all(inside.join("camp")).unwrap();
        fs::create_dir_all(&outside).unwrap();
        file::save(
            &inside.join("camp/campaign.json"),
            &Campaign::new("camp_0001", &[]),
        )
        .unwrap();
        file::save(
            &outside.join("campaign.json"),
            &Campaign::new("camp_9999", &[]),
        )
        .unwrap();
        fs::write(outside.join("secret.txt"), "the operator's own file\n").unwrap();
        Dirs {
            _temp: temp,
            inside,
            outside,
        }
    }

    fn dir(&self) -> CampaignDir {
        CampaignDir::new(&self.inside)
    }

    /// Every file outside, with its bytes.
    fn outside_files(&self) -> Vec<(PathBuf, Vec<u8>)> {
        let mut files: Vec<_> = fs::read_dir(&self.outside)
            .unwrap()
            .map(|e| {
                let path = e.unwrap().path();
                let bytes = fs::read(&path).unwrap();
                (path, bytes)
            })
            .collect();
        files.sort();
        files
    }
}

/// `f` on a thread of its own; panics when it has not returned within 10 s (it blocked).
fn without_blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(10))
        .expect("the call blocked")
}

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("run mkfifo");
    assert!(status.success());
}

fn an_entry() -> TurnEntry {
    serde_json::from_value(json!({
        "turn_id": "turn_0001", "timestamp": "2026-11-26T10:00:00.000000+00:00",
        "user_input": "look", "actor_id": "pc_001", "dialog_type": "scene_description",
        "dialog_type_source": "model", "assistant_text": "A quiet room.", "tool_calls": [],
        "applied_actions": [], "tool_feedback": null, "state_summary": {}
    }))
    .unwrap()
}

#[test]
fn files_inside_load_also_through_symlinks_that_stay_inside() {
    let dirs = Dirs::new();
    symlink(
        dirs.inside.join("camp/campaign.json"),
        dirs.inside.join("alias.json"),
    )
    .unwrap();
    symlink("camp", dirs.inside.join("linked_dir")).unwrap();
    for name in [
        "camp/campaign.json",
        "./camp/campaign.json",
        "alias.json",
        "linked_dir/campaign.json",
    ] {
        let file = dirs.dir().resolve(name).unwrap();
        assert_eq!(file.name(), name);
        assert_eq!(file.load().unwrap().campaign.id, "camp_0001", "{name}");
    }
}

#[test]
fn names_leaving_the_directory_are_answered_as_missing_files() {
    let dirs = Dirs::new();
    let before = dirs.outside_files();
    let outside = &dirs.outside;
    symlink(outside.join("campaign.json"), dirs.inside.join("out.json")).unwrap();
    symlink(outside.join("none.json"), dirs.inside.join("gone.json")).unwrap();
    symlink(outside.join("secret.txt"), dirs.inside.join("secret.json")).unwrap();
    symlink(outside, dirs.inside.join("out_dir")).unwrap();
    symlink("/dev/zero", dirs.inside.join("zero.json")).unwrap();
    symlink("/etc", dirs.inside.join("etc")).unwrap();

    // Syntax first: refused before the file system is asked.
    let absolute = outside.join("campaign.json").display().to_string();
    for name in [
        absolute.as_str(),
        "../elsewhere/campaign.json",
        "camp/../../x",
        "",
    ] {
        match dirs.dir().resolve(name) {
            Err(e @ CampaignError::PathNotRelative(_)) => {
                assert!(
                    e.to_string().contains("relative to the campaign directory"),
                    "{e}"
                )
            }
            other => panic!("{name}: {other:?}"),
        }
    }
    // An existing file outside, a missing one, a directory, a device, a system directory: the
    // same answer as a name that names nothing, so nothing is learnt about what lies outside.
    let missing = dirs.dir().resolve("nothing.json").unwrap_err().to_string();
    assert_eq!(
        missing,
        "no file 'nothing.json' inside the campaign directory"
    );
    for name in [
        "out.json",
        "gone.json",
        "secret.json",
        "out_dir/campaign.json",
        "out_dir/none.json",
        "zero.json",
        "etc/passwd",
        "etc/nothing",
    ] {
        let e = without_blocking({
            let dir = dirs.dir();
            move || dir.resolve(name).map(|f| f.path().to_path_buf())
        })
        .unwrap_err();
        assert!(matches!(e, CampaignError::NoSuchFile(_)), "{name}: {e:?}");
        assert_eq!(e.to_string(), missing.replace("nothing.json", name));
    }
    assert_eq!(dirs.outside_files(), before, "nothing outside changed");
}

#[test]
fn fifos_and_directories_inside_are_refused_without_waiting() {
    let dirs = Dirs::new();
    mkfifo(&dirs.inside.join("pipe.json"));
    // Twice: a refused FIFO leaves nothing behind that blocks the next one.
    for _ in 0..2 {
        let e = without_blocking({
            let dir = dirs.dir();
            move || dir.resolve("pipe.json").and_then(|f| f.load())
        })
        .unwrap_err();
        assert_eq!(e.to_string(), "'pipe.json' is a FIFO, not a regular file");
    }
    let e = dirs.dir().resolve("camp").unwrap_err();
    assert_eq!(e.to_string(), "'camp' is a directory, not a regular file");
    let e = dirs.dir().resolve(".").unwrap_err();
    assert!(
        matches!(
            e,
            CampaignError::NotRegularFile {
                kind: "a directory",
                ..
            }
        ),
        "{e:?}"
    );
    // The same checks for the operator's own paths: no wait on a FIFO there either.
    let fifo = dirs.inside.join("pipe.json");
    let e = without_blocking(move || CampaignFile::any(fifo).load()).unwrap_err();
    assert!(e.to_string().contains("is a FIFO"), "{e}");
}

#[test]
fn files_over_the_limit_are_refused_unread() {
    let dirs = Dirs::new();
    let big = dirs.inside.join("big.json");
    let text = format!(
        "{{\"id\": \"camp_0002\", \"map\": null, \"pad\": \"{}\"}}",
        " ".repeat(MAX_CAMPAIGN_FILE_BYTES as usize)
    );
    fs::write(&big, &text).unwrap();
    let e = dirs.dir().resolve("big.json").unwrap().load().unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "'big.json' is {} bytes long; the limit is {MAX_CAMPAIGN_FILE_BYTES}",
            text.len()
        )
    );
}

#[test]
fn json_that_is_not_a_campaign_is_refused_and_left_as_it_is() {
    let dirs = Dirs::new();
    for (name, text) in [
        (
            "package.json",
            "{\"name\": \"tool\", \"version\": \"1.0.0\"}\n",
        ),
        ("empty.json", "{}"),
        ("list.json", "[1, 2, 3]"),
        ("ids.json", "{\"id\": \"x\", \"items\": []}"),
    ] {
        let path = dirs.inside.join(name);
        fs::write(&path, text).unwrap();
        let e = dirs.dir().resolve(name).unwrap().load().unwrap_err();
        assert!(matches!(e, CampaignError::NotACampaign(_)), "{name}: {e:?}");
        assert!(e.to_string().contains("is not a campaign file"), "{e}");
        assert_eq!(fs::read_to_string(&path).unwrap(), text, "{name} unchanged");
    }
    let e = dirs.dir().resolve("camp/campaign.json").unwrap();
    fs::write(e.path(), "not json").unwrap();
    assert!(matches!(e.load(), Err(CampaignError::Json(_))));
}

#[test]
fn saves_and_turn_logs_never_go_through_a_symlink_or_into_a_fifo() {
    let dirs = Dirs::new();
    let before = dirs.outside_files();
    let file = dirs.dir().resolve("camp/campaign.json").unwrap();
    let mut campaign = file.load().unwrap().campaign;
    campaign.goal.text = "Find the key".into();
    file.save(&campaign).unwrap();
    file.append_turn(&an_entry()).unwrap();
    assert_eq!(
        file.load().unwrap().campaign.goal.text,
        "Find the key",
        "saved in place"
    );
    let log = dirs.inside.join("camp/turn_log.jsonl");
    assert_eq!(fs::read_to_string(&log).unwrap().lines().count(), 1);

    // The file swapped for a symlink out after it was loaded: the save is refused.
    let path = file.path().to_path_buf();
    fs::remove_file(&path).unwrap();
    symlink(dirs.outside.join("campaign.json"), &path).unwrap();
    let e = file.save(&campaign).unwrap_err();
    assert_eq!(
        e.to_string(),
        "'camp/campaign.json' is a symlink, not a regular file"
    );
    // The turn log a symlink out, then a FIFO: refused, nothing written or waited on.
    fs::remove_file(&log).unwrap();
    symlink(dirs.outside.join("secret.txt"), &log).unwrap();
    let e = file.append_turn(&an_entry()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "'camp/turn_log.jsonl' is a symlink, not a regular file"
    );
    fs::remove_file(&log).unwrap();
    mkfifo(&log);
    let fifo_file = file.clone();
    assert!(without_blocking(move || fifo_file.append_turn(&an_entry())).is_err());
    // Nobody reads the FIFO: opened for reading without waiting, it holds nothing.
    assert_eq!(dirs.outside_files(), before, "nothing outside changed");
}

#[test]
fn the_next_id_skips_what_is_not_a_regular_file_without_waiting() {
    let dirs = Dirs::new();
    file::save(
        &dirs.inside.join("third.json"),
        &Campaign::new("camp_0003", &[]),
    )
    .unwrap();
    mkfifo(&dirs.inside.join("pipe.json"));
    let dir = dirs.inside.clone();
    assert_eq!(without_blocking(move || file::next_id(&dir)), "camp_0004");
}

//! Screenshots of what a person looks at: each scene of [`SHOTS`] runs in a real window under
//! a virtual display (Xvfb, Debian's `xvfb` package, installed here when missing and running
//! as root), saves the window as a PNG under `target/screenshots/`, and the picture is checked
//! not to be blank: enough distinct colours, and no single colour covering almost all of it.
//! Text cannot be read back from the picture, so the scene also prints the texts of its visible
//! labels and buttons as one line, `SHOT_LABELS: a | b | c`, when it saves the window, and each
//! of the shot's [`Shot::expect`] strings must be found in one of them.
//! Part of `cargo xtask test` (suite names `screenshot_<name>`); look at the files too.

use std::fs;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::Ctx;
use crate::godot::{self, Godot};
use crate::godot_tests::{self, SuiteRun};
use crate::process::{self, Echo};

/// One scene to photograph.
pub struct Shot {
    /// Its name: the suite is `screenshot_<name>`, the file `target/screenshots/<name>.png`.
    pub name: &'static str,
    /// The scene.
    pub scene: &'static str,
    /// The scene's user arguments before `--screenshot PATH` (which it must understand: save
    /// the window there, print the [`LABELS_PREFIX`] line, then quit with 0 when all went well).
    pub args: &'static [&'static str],
    /// Texts that must be on screen: each must be part of one of the labels or buttons the
    /// scene printed on its [`LABELS_PREFIX`] line.
    pub expect: &'static [&'static str],
}

/// The scenes photographed by `cargo xtask test`.
pub const SHOTS: &[Shot] = &[
    Shot {
        name: "menu",
        scene: "res://demo/menu.tscn",
        args: &[],
        expect: &[
            "Godot Agents",
            "GDExtension",
            "Town",
            "Board game vs agent",
            "Dungeon",
            "Brain: scripted",
        ],
    },
    Shot {
        name: "town",
        scene: "res://demo/town.tscn",
        args: &[],
        expect: &[
            "Agent town",
            "Menu (Esc)",
            "Brain: scripted",
            "Town log",
            "Mira",
            "Bram",
            "Talking to Mira, the baker",
            "Say",
        ],
    },
    Shot {
        name: "app_chat",
        scene: "res://demo/app_chat.tscn",
        args: &["--tour"],
        expect: &[
            "Board game vs agent",
            "Menu (Esc)",
            "Brain: scripted",
            "Who plays O:",
            "Round",
            "Send",
        ],
    },
    Shot {
        name: "talk",
        scene: "res://demo/talk.tscn",
        args: &["--tour"],
        expect: &[
            "Talk to an agent",
            "Mira, the baker",
            "Talking to Mira",
            "Send",
        ],
    },
    Shot {
        name: "dungeon",
        scene: "res://demo/dungeon.tscn",
        args: &["--tour"],
        expect: &[
            "Dungeon",
            "Menu (Esc)",
            "Brain: scripted",
            "Turn log",
            "pc_001 in Depths Entry, 11 hp",
            "Act",
        ],
    },
];

/// The start of the line a scene prints with the texts of its visible labels and buttons,
/// separated by `" | "`.
pub const LABELS_PREFIX: &str = "SHOT_LABELS: ";

/// The virtual screen.
const SCREEN: &str = "-screen 0 1280x720x24";

/// Fewest distinct colours (5 bits a channel) a picture that shows something has.
const MIN_COLOURS: usize = 16;

/// Largest share of the pixels one colour may cover.
const MAX_DOMINANT_SHARE: f64 = 0.97;

/// The suite prefix.
const PREFIX: &str = "screenshot_";

/// Whether `name` selects a screenshot (`screenshot_app_chat`, or `screenshot` for all).
pub fn is_screenshot_suite(name: &str) -> bool {
    name == "screenshot" || name.starts_with(PREFIX)
}

/// Where the screenshots go.
pub fn dir(ctx: &Ctx) -> PathBuf {
    ctx.target_dir.join("screenshots")
}

/// Takes and checks the screenshots `selected` names (all when it is empty or holds
/// `screenshot`).
pub fn run(ctx: &Ctx, godot: &Godot, selected: &[String], timeout: Duration) -> SuiteRun {
    let mut run = SuiteRun::default();
    let all = selected.is_empty() || selected.iter().any(|s| s == "screenshot");
    let shots: Vec<&Shot> = SHOTS
        .iter()
        .filter(|s| {
            all || selected
                .iter()
                .any(|n| n.strip_prefix(PREFIX) == Some(s.name))
        })
        .collect();
    for name in selected.iter().filter(|n| {
        n.as_str() != "screenshot" && !SHOTS.iter().any(|s| n.strip_prefix(PREFIX) == Some(s.name))
    }) {
        run.failed += 1;
        run.problems.push(format!(
            "[screenshots] no screenshot is called '{name}' (known: {})",
            SHOTS
                .iter()
                .map(|s| format!("{PREFIX}{}", s.name))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if shots.is_empty() {
        return run;
    }
    if let Err(e) = ensure_xvfb() {
        run.failed += 1;
        run.problems.push(format!("[screenshots] {e}"));
        return run;
    }
    let out_dir = dir(ctx);
    if let Err(e) = fs::create_dir_all(&out_dir) {
        run.failed += 1;
        run.problems.push(format!(
            "[screenshots] cannot create {}: {e}",
            out_dir.display()
        ));
        return run;
    }
    for shot in shots {
        let png = out_dir.join(format!("{}.png", shot.name));
        match take(godot, &ctx.project_dir(), shot, &png, timeout) {
            Ok(summary) => {
                println!("xtask: screenshot {}: {summary}", png.display());
                run.passed += 1;
            }
            Err(e) => {
                run.failed += 1;
                run.problems.push(format!("[screenshot {}] {e}", shot.name));
            }
        }
    }
    run
}

/// Runs the scene under Xvfb and checks the picture it saved; returns what was measured.
fn take(
    godot: &Godot,
    project: &Path,
    shot: &Shot,
    png: &Path,
    timeout: Duration,
) -> Result<String, String> {
    let _ = fs::remove_file(png);
    let base = godot.command();
    let mut cmd = Command::new("xvfb-run");
    cmd.args(["-a", "-s", SCREEN])
        .arg(base.get_program())
        .args(base.get_args())
        .args(["--rendering-driver", "opengl3", "--audio-driver", "Dummy"])
        .arg("--path")
        .arg(project)
        .arg(shot.scene)
        .arg("--")
        .args(shot.args)
        .arg("--screenshot")
        .arg(png);
    println!("xtask: screenshot of {} under Xvfb", shot.scene);
    let out = process::run(&mut cmd, Some(timeout), Echo::Stream)?;
    let mut problems = godot_tests::scan_output(&out.output);
    if !out.success() {
        problems.push(format!("the scene ended with {}", out.ending()));
    }
    if !problems.is_empty() {
        return Err(problems.join("; "));
    }
    let picture = Picture::load(png)?;
    let summary = picture.check()?;
    let labels = check_labels(&out.output, shot.expect)?;
    Ok(format!("{summary}; {labels}"))
}

/// The texts of the last [`LABELS_PREFIX`] line of `output`, or `None` when there is none.
fn shot_labels(output: &str) -> Option<Vec<&str>> {
    let line = output
        .lines()
        .rev()
        .find_map(|l| l.trim_end().strip_prefix(LABELS_PREFIX))?;
    Some(
        line.split(" | ")
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .collect(),
    )
}

/// Checks that each of `expect` is part of one of the labels the scene printed; returns what
/// was found.
fn check_labels(output: &str, expect: &[&str]) -> Result<String, String> {
    let Some(labels) = shot_labels(output) else {
        return Err(format!(
            "the scene printed no '{}' line (the texts of its visible labels)",
            LABELS_PREFIX.trim_end()
        ));
    };
    let missing: Vec<&str> = expect
        .iter()
        .copied()
        .filter(|e| !labels.iter().any(|l| l.contains(e)))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "expected labels not on screen: {} (the labels: {})",
            missing
                .iter()
                .map(|m| format!("'{m}'"))
                .collect::<Vec<_>>()
                .join(", "),
            labels.join(" | ")
        ));
    }
    Ok(format!(
        "{} labels, the {} expected among them",
        labels.len(),
        expect.len()
    ))
}

/// A decoded screenshot, as 8-bit RGB.
pub(crate) struct Picture {
    width: u32,
    height: u32,
    rgb: Vec<u8>,
}

impl Picture {
    pub(crate) fn load(path: &Path) -> Result<Picture, String> {
        let file = fs::File::open(path)
            .map_err(|e| format!("no screenshot at {}: {e}", path.display()))?;
        let mut decoder = png::Decoder::new(BufReader::new(file));
        decoder.set_transformations(png::Transformations::normalize_to_color8());
        let mut reader = decoder
            .read_info()
            .map_err(|e| format!("{} is no PNG: {e}", path.display()))?;
        let size = reader
            .output_buffer_size()
            .ok_or_else(|| format!("{} is too large to decode", path.display()))?;
        let mut buf = vec![0; size];
        let info = reader
            .next_frame(&mut buf)
            .map_err(|e| format!("{} does not decode: {e}", path.display()))?;
        buf.truncate(info.buffer_size());
        let channels = info.color_type.samples();
        let rgb = match channels {
            3 => buf,
            4 => buf
                .chunks_exact(4)
                .flat_map(|p| [p[0], p[1], p[2]])
                .collect(),
            1 => buf.iter().flat_map(|&g| [g, g, g]).collect(),
            2 => buf
                .chunks_exact(2)
                .flat_map(|p| [p[0], p[0], p[0]])
                .collect(),
            n => return Err(format!("{}: {n} channels", path.display())),
        };
        Ok(Picture {
            width: info.width,
            height: info.height,
            rgb,
        })
    }

    /// How many pixels of the rows `rows` are within `tolerance` of `colour` in every channel.
    pub(crate) fn count_near(
        &self,
        colour: [u8; 3],
        tolerance: u8,
        rows: std::ops::Range<u32>,
    ) -> usize {
        self.count_near_in(colour, tolerance, rows, 0..self.width)
    }

    /// How many pixels of the area `rows` × `columns` are within `tolerance` of `colour` in
    /// every channel.
    pub(crate) fn count_near_in(
        &self,
        colour: [u8; 3],
        tolerance: u8,
        rows: std::ops::Range<u32>,
        columns: std::ops::Range<u32>,
    ) -> usize {
        let width = self.width as usize;
        let (left, right) = (
            columns.start.min(self.width) as usize,
            columns.end.min(self.width) as usize,
        );
        (rows.start.min(self.height)..rows.end.min(self.height))
            .map(|row| {
                let at = row as usize * width;
                self.rgb[(at + left) * 3..(at + right.max(left)) * 3]
                    .chunks_exact(3)
                    .filter(|p| (0..3).all(|i| p[i].abs_diff(colour[i]) <= tolerance))
                    .count()
            })
            .sum()
    }

    /// The rows of `rows` holding at least `least` pixels within `tolerance` of `colour`.
    pub(crate) fn rows_with(
        &self,
        colour: [u8; 3],
        tolerance: u8,
        least: usize,
        rows: std::ops::Range<u32>,
    ) -> Vec<u32> {
        rows.filter(|row| self.count_near(colour, tolerance, *row..row + 1) >= least)
            .collect()
    }

    /// Not blank: at least [`MIN_COLOURS`] colours, none covering more than
    /// [`MAX_DOMINANT_SHARE`] of the picture.
    pub(crate) fn check(&self) -> Result<String, String> {
        let pixels = (self.width as usize) * (self.height as usize);
        if pixels == 0 {
            return Err("the screenshot is empty (0 pixels)".into());
        }
        let mut counts = std::collections::HashMap::<u16, usize>::new();
        for p in self.rgb.chunks_exact(3) {
            let key =
                (u16::from(p[0] >> 3) << 10) | (u16::from(p[1] >> 3) << 5) | u16::from(p[2] >> 3);
            *counts.entry(key).or_default() += 1;
        }
        let dominant = counts.values().copied().max().unwrap_or(0) as f64 / pixels as f64;
        let summary = format!(
            "{}x{}, {} colours, the commonest covers {:.1}%",
            self.width,
            self.height,
            counts.len(),
            dominant * 100.0
        );
        if counts.len() < MIN_COLOURS || dominant > MAX_DOMINANT_SHARE {
            return Err(format!("the screenshot looks blank: {summary}"));
        }
        Ok(summary)
    }
}

/// Makes sure `xvfb-run` is there: as root, installs Debian's `xvfb` package when it is not.
pub(crate) fn ensure_xvfb() -> Result<(), String> {
    crate::packages::ensure(
        "xvfb-run for the screenshots",
        || godot::which("xvfb-run").is_some(),
        &["xvfb", "xauth"],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn picture(width: u32, height: u32, f: impl Fn(u32, u32) -> [u8; 3]) -> Picture {
        let mut rgb = Vec::new();
        for y in 0..height {
            for x in 0..width {
                rgb.extend(f(x, y));
            }
        }
        Picture { width, height, rgb }
    }

    #[test]
    fn a_flat_picture_is_blank() {
        let flat = picture(64, 64, |_, _| [20, 22, 30]);
        assert!(flat.check().unwrap_err().contains("looks blank"));
        // A few specks on a flat background are still blank.
        let specks = picture(64, 64, |x, y| {
            if x == y {
                [255, 255, 255]
            } else {
                [20, 22, 30]
            }
        });
        assert!(specks.check().is_err());
    }

    #[test]
    fn a_varied_picture_is_not() {
        let varied = picture(64, 64, |x, y| [(x * 4) as u8, (y * 4) as u8, 128]);
        let summary = varied.check().unwrap();
        assert!(summary.starts_with("64x64"), "{summary}");
    }

    #[test]
    fn expected_labels_are_checked() {
        let output =
            "noise\nSHOT_LABELS: Godot Agents | Town | Brain: scripted (offline)\nscreenshot: x";
        assert_eq!(
            shot_labels(output).unwrap(),
            ["Godot Agents", "Town", "Brain: scripted (offline)"]
        );
        let found = check_labels(output, &["Town", "Brain: scripted"]).unwrap();
        assert!(found.starts_with("3 labels"), "{found}");
        let missing = check_labels(output, &["Town", "Dungeon"]).unwrap_err();
        assert!(missing.contains("'Dungeon'"), "{missing}");
        assert!(!missing.contains("'Town'"), "{missing}");
        let none = check_labels("no labels here", &["Town"]).unwrap_err();
        assert!(none.contains("printed no 'SHOT_LABELS:' line"), "{none}");
    }

    #[test]
    fn every_shot_expects_labels() {
        for shot in SHOTS {
            assert!(!shot.expect.is_empty(), "{} expects no labels", shot.name);
        }
        let names: Vec<&str> = SHOTS.iter().map(|s| s.name).collect();
        assert_eq!(names, ["menu", "town", "app_chat", "talk", "dungeon"]);
    }

    #[test]
    fn suite_names_select_shots() {
        assert!(is_screenshot_suite("screenshot"));
        assert!(is_screenshot_suite("screenshot_app_chat"));
        assert!(!is_screenshot_suite("test_agent_app"));
    }
}

//! How long each phase of `cargo xtask test` took, printed as a table at the end, so a slow CI
//! run says where its minutes went.

use std::time::{Duration, Instant};

/// The phases timed so far, in the order they ran.
#[derive(Debug, Default)]
pub struct Phases {
    rows: Vec<(String, Duration)>,
}

impl Phases {
    /// Runs `phase`, noting how long it took under `name`.
    pub fn time<T>(&mut self, name: &str, phase: impl FnOnce() -> T) -> T {
        let started = Instant::now();
        let out = phase();
        self.rows.push((name.to_string(), started.elapsed()));
        out
    }

    /// The table: one line per phase, its minutes and seconds and its share of the whole, then
    /// the total.
    pub fn table(&self) -> String {
        let total: Duration = self.rows.iter().map(|(_, d)| *d).sum();
        let width = self
            .rows
            .iter()
            .map(|(name, _)| name.len())
            .chain(["total".len()])
            .max()
            .unwrap_or(0);
        let mut out = String::from("xtask: phases\n");
        for (name, took) in &self.rows {
            let share = if total.is_zero() {
                0.0
            } else {
                100.0 * took.as_secs_f64() / total.as_secs_f64()
            };
            out.push_str(&format!(
                "  {name:<width$}  {:>8}  {share:>3.0} %\n",
                clock(*took)
            ));
        }
        out.push_str(&format!("  {:<width$}  {:>8}\n", "total", clock(total)));
        out
    }
}

/// `1h02m03s`, `12m05s` or `42s`.
fn clock(d: Duration) -> String {
    let s = d.as_secs();
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, 0, sec) => format!("{sec}s"),
        (0, min, sec) => format!("{min}m{sec:02}s"),
        (h, min, sec) => format!("{h}h{min:02}m{sec:02}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_names_each_phase_its_time_and_share() {
        let mut phases = Phases::default();
        let got = phases.time("cargo test --workspace", || 7);
        assert_eq!(got, 7);
        phases.rows[0].1 = Duration::from_secs(1_500);
        phases
            .rows
            .push(("Godot suites".into(), Duration::from_secs(500)));
        let table = phases.table();
        assert_eq!(
            table,
            "xtask: phases\n  cargo test --workspace    25m00s   75 %\n  \
             Godot suites               8m20s   25 %\n  total                     33m20s\n"
        );
        assert_eq!(clock(Duration::from_secs(3_723)), "1h02m03s");
        assert_eq!(clock(Duration::from_secs(42)), "42s");
        assert!(Phases::default().table().contains("total"));
    }
}

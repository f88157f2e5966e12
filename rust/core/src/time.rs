//! Wall-clock timestamps: UTC ISO-8601 with milliseconds (`2026-11-21T09:30:00.123Z`), the one
//! format every stored row and event uses. Written by hand (civil-from-days) to avoid a date crate.

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch, now.
pub fn unix_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Now as UTC ISO-8601 with milliseconds, e.g. `2026-11-21T09:30:00.123Z`.
pub fn now_iso() -> String {
    iso_from_millis(unix_millis())
}

/// Formats milliseconds since the Unix epoch as UTC ISO-8601 with milliseconds.
pub fn iso_from_millis(millis: u64) -> String {
    format!("{}.{:03}Z", date_time(millis / 1000), millis % 1000)
}

/// Now as Python's `datetime.now(timezone.utc).isoformat()` writes it: UTC with microseconds
/// and `+00:00` (`2026-01-14T16:05:31.123456+00:00`), the campaign files' format.
pub fn now_iso_micros() -> String {
    let micros = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0);
    iso_from_micros(micros)
}

/// Formats microseconds since the Unix epoch as UTC ISO-8601 with microseconds and `+00:00`.
pub fn iso_from_micros(micros: u64) -> String {
    format!(
        "{}.{:06}+00:00",
        date_time(micros / 1_000_000),
        micros % 1_000_000
    )
}

/// Seconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SS` (UTC).
fn date_time(secs: u64) -> String {
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    let rem = secs % 86_400;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// Howard Hinnant's `civil_from_days`: days since 1970-01-01 → (year, month, day).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// This machine's name (`/proc/sys/kernel/hostname`, else `HOSTNAME`, else `host`), for
/// process names in logs and in a cluster.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "host".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_microseconds_as_python_does() {
        assert_eq!(iso_from_micros(0), "1970-01-01T00:00:00.000000+00:00");
        assert_eq!(
            iso_from_micros(951_827_696_789_012),
            "2000-02-29T12:34:56.789012+00:00"
        );
    }

    #[test]
    fn formats_known_instants() {
        assert_eq!(iso_from_millis(0), "1970-01-01T00:00:00.000Z");
        // 2000-02-29 (a leap day in a century leap year) 12:34:56.789
        assert_eq!(iso_from_millis(951_827_696_789), "2000-02-29T12:34:56.789Z");
        // 2026-11-21 00:00:00
        assert_eq!(
            iso_from_millis(1_795_219_200_000),
            "2026-11-21T00:00:00.000Z"
        );
        // 2100-03-01 (2100 is not a leap year)
        assert_eq!(
            iso_from_millis(4_107_542_400_000),
            "2100-03-01T00:00:00.000Z"
        );
    }

    #[test]
    fn now_is_sortable_and_well_formed() {
        let now = now_iso();
        assert_eq!(now.len(), 24);
        assert!(now.ends_with('Z'));
        assert!(now.as_str() > "2020-01-01");
    }
}

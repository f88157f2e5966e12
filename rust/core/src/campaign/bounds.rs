//! How large a campaign may be. A campaign is refused at load — from a file or inline — when
//! its id is longer than [`MAX_CAMPAIGN_ID_CHARS`], it has more than [`MAX_CAMPAIGN_AREAS`]
//! areas or [`MAX_CAMPAIGN_ACTORS`] actors, one area or actor (with its id) is more than
//! [`MAX_CAMPAIGN_ENTRY_BYTES`] of JSON, or the rest of it (settings, allowlist, goal, …) is
//! more than [`MAX_CAMPAIGN_HEAD_BYTES`]. So a loaded campaign stays small enough to hold, to
//! copy for a GM turn and to send in pages ([`super::page`]): each page has room for the rest of
//! the campaign and at least one area or actor. Each problem is named as the other load problems
//! are (`map.areas: 2001 areas; the limit is 2000`).

use super::Campaign;
use super::page::PageView;
use super::view::json_bytes;
use crate::limits::{
    MAX_CAMPAIGN_ACTORS, MAX_CAMPAIGN_AREAS, MAX_CAMPAIGN_ENTRY_BYTES, MAX_CAMPAIGN_HEAD_BYTES,
    MAX_CAMPAIGN_ID_CHARS,
};

/// Every way `campaign` is larger than a campaign may be (empty: within every limit).
pub(super) fn problems(campaign: &Campaign) -> Vec<String> {
    let mut problems = Vec::new();
    if let Err(e) = crate::limits::check_chars("id", &campaign.id, MAX_CAMPAIGN_ID_CHARS) {
        problems.push(e);
    }
    let areas = campaign.map.areas.len();
    if areas > MAX_CAMPAIGN_AREAS {
        problems.push(format!(
            "map.areas: {areas} areas; the limit is {MAX_CAMPAIGN_AREAS}"
        ));
    }
    let actors = campaign.actors.len();
    if actors > MAX_CAMPAIGN_ACTORS {
        problems.push(format!(
            "actors: {actors} actors; the limit is {MAX_CAMPAIGN_ACTORS}"
        ));
    }
    if !problems.is_empty() {
        return problems;
    }
    let head = json_bytes(&PageView::head(campaign));
    if head > MAX_CAMPAIGN_HEAD_BYTES {
        problems.push(format!(
            "campaign without its areas and actors is {head} bytes of JSON; the limit is \
             {MAX_CAMPAIGN_HEAD_BYTES}"
        ));
    }
    let entries = campaign
        .map
        .areas
        .iter()
        .map(|(id, a)| ("area", id, id.len() + json_bytes(a)))
        .chain(
            campaign
                .actors
                .iter()
                .map(|(id, a)| ("actor", id, id.len() + json_bytes(a))),
        );
    for (kind, id, bytes) in entries {
        if bytes > MAX_CAMPAIGN_ENTRY_BYTES {
            problems.push(format!(
                "{kind}:{}: {bytes} bytes of JSON; the limit is {MAX_CAMPAIGN_ENTRY_BYTES}",
                crate::limits::cut_copy(id, 64)
            ));
        }
    }
    problems
}

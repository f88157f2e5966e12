//! sea_battle (to be written).

//! Whether a model's `gpu_layers` can be honoured: the GPU back ends this build carries
//! ([`BACKENDS`], its `vulkan`, `metal` and `cuda` features) and the devices they found.
//!
//! A model asked to put layers on a GPU that is not there would run on the CPU without a word
//! (llama.cpp keeps the layers it cannot offload); [`check`] says so instead, before the model
//! is loaded. Vulkan leaves out a driver that runs on the CPU (Mesa's lavapipe) unless
//! `GGML_VK_VISIBLE_DEVICES` names it.

use llama_cpp_2::{LlamaBackendDeviceType, list_llama_ggml_backend_devices};

use crate::error::LocalError;

/// The GPU back ends this build carries.
pub const BACKENDS: &[&str] = &[
    #[cfg(feature = "vulkan")]
    "vulkan",
    #[cfg(feature = "metal")]
    "metal",
    #[cfg(feature = "cuda")]
    "cuda",
];

/// The GPU devices this build's back ends found, by name and description (`Vulkan0`,
/// `llvmpipe (LLVM 15.0.6, 256 bits)`).
pub fn devices() -> Result<Vec<(String, String)>, LocalError> {
    crate::worker::backend()?;
    Ok(list_llama_ggml_backend_devices()
        .into_iter()
        .filter(|d| {
            matches!(
                d.device_type,
                LlamaBackendDeviceType::Gpu
                    | LlamaBackendDeviceType::IntegratedGpu
                    | LlamaBackendDeviceType::Accelerator
            )
        })
        .map(|d| (d.name, d.description))
        .collect())
}

/// Ok when `gpu_layers` is 0, or a GPU device is there to take them.
pub fn check(gpu_layers: u32) -> Result<(), LocalError> {
    if gpu_layers == 0 {
        return Ok(());
    }
    let missing = |reason: String| LocalError::NoGpu { gpu_layers, reason };
    if BACKENDS.is_empty() {
        return Err(missing(
            "this build has no GPU back end (it was built without the vulkan, metal and cuda \
             features)"
                .into(),
        ));
    }
    if devices()?.is_empty() {
        return Err(missing(format!(
            "no GPU device was found by this build's {} back end",
            BACKENDS.join(" and ")
        )));
    }
    Ok(())
}

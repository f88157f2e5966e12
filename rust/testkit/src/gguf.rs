//! A tiny model file made by the tests themselves: a llama-architecture GGUF with random
//! weights, a few kilobytes, that llama.cpp loads and runs in milliseconds.
//!
//! Its text is noise, which is the point: what the local model's tests check — loading, many
//! sequences decoded together, the prefix cache, replies constrained to a JSON Schema,
//! cancellation — must hold whatever the weights say. The vocabulary is SentencePiece-style: the
//! three control tokens (`<unk>`, `<s>`, `</s>`), `▁` (a space) and the 256 byte tokens, so any
//! text can be spelled and any JSON produced.
//!
//! The format is GGUF version 3 (<https://github.com/ggml-org/ggml/blob/master/docs/gguf.md>):
//! a header, typed key–value metadata, tensor descriptions, then the tensors' data, each aligned
//! to 32 bytes. Tensors are `F32`.

use std::io::{self, Write};
use std::path::Path;

/// The shape of a tiny model.
#[derive(Clone, Copy, Debug)]
pub struct TinyModel {
    /// Width of the embeddings (a multiple of `heads`).
    pub embedding: u32,
    /// Transformer blocks.
    pub blocks: u32,
    /// Attention heads.
    pub heads: u32,
    /// Width of the feed-forward layer.
    pub feed_forward: u32,
    /// The context it was "trained" with.
    pub context: u32,
    /// Seeds the weights.
    pub seed: u64,
}

impl Default for TinyModel {
    fn default() -> Self {
        TinyModel {
            embedding: 32,
            blocks: 2,
            heads: 2,
            feed_forward: 64,
            context: 4096,
            seed: 7,
        }
    }
}

/// The vocabulary's size: 3 control tokens, `▁`, 256 bytes.
pub const VOCABULARY: u32 = 260;

/// Writes the default tiny model to `path`.
pub fn write_tiny_model(path: &Path) -> io::Result<()> {
    TinyModel::default().write(path)
}

impl TinyModel {
    /// Writes this model to `path` (replacing what is there).
    pub fn write(&self, path: &Path) -> io::Result<()> {
        let mut file = io::BufWriter::new(std::fs::File::create(path)?);
        file.write_all(&self.bytes())?;
        file.flush()
    }

    /// The whole file.
    pub fn bytes(&self) -> Vec<u8> {
        let (e, ff, v) = (
            self.embedding as u64,
            self.feed_forward as u64,
            VOCABULARY as u64,
        );
        let mut tensors: Vec<(String, Vec<u64>, Init)> = vec![
            ("token_embd.weight".into(), vec![e, v], Init::Random),
            ("output_norm.weight".into(), vec![e], Init::Ones),
            ("output.weight".into(), vec![e, v], Init::Random),
        ];
        for b in 0..self.blocks {
            let name = |n: &str| format!("blk.{b}.{n}.weight");
            tensors.extend([
                (name("attn_norm"), vec![e], Init::Ones),
                (name("attn_q"), vec![e, e], Init::Random),
                (name("attn_k"), vec![e, e], Init::Random),
                (name("attn_v"), vec![e, e], Init::Random),
                (name("attn_output"), vec![e, e], Init::Random),
                (name("ffn_norm"), vec![e], Init::Ones),
                (name("ffn_gate"), vec![e, ff], Init::Random),
                (name("ffn_up"), vec![e, ff], Init::Random),
                (name("ffn_down"), vec![ff, e], Init::Random),
            ]);
        }

        let mut tokens: Vec<String> = vec!["<unk>".into(), "<s>".into(), "</s>".into(), "▁".into()];
        let mut types: Vec<i32> = vec![2, 3, 3, 1];
        for byte in 0..=255u8 {
            tokens.push(format!("<0x{byte:02X}>"));
            types.push(6);
        }
        let scores: Vec<f32> = (0..tokens.len()).map(|i| -(i as f32)).collect();

        let mut meta = Meta::default();
        meta.string("general.architecture", "llama");
        meta.string("general.name", "godot-agents tiny test model");
        meta.u32("general.alignment", ALIGNMENT as u32);
        meta.u32("llama.context_length", self.context);
        meta.u32("llama.embedding_length", self.embedding);
        meta.u32("llama.block_count", self.blocks);
        meta.u32("llama.feed_forward_length", self.feed_forward);
        meta.u32("llama.attention.head_count", self.heads);
        meta.u32("llama.attention.head_count_kv", self.heads);
        meta.u32("llama.rope.dimension_count", self.embedding / self.heads);
        meta.f32("llama.attention.layer_norm_rms_epsilon", 1e-5);
        meta.string("tokenizer.ggml.model", "llama");
        meta.strings("tokenizer.ggml.tokens", &tokens);
        meta.f32s("tokenizer.ggml.scores", &scores);
        meta.i32s("tokenizer.ggml.token_type", &types);
        meta.u32("tokenizer.ggml.unknown_token_id", 0);
        meta.u32("tokenizer.ggml.bos_token_id", 1);
        meta.u32("tokenizer.ggml.eos_token_id", 2);
        meta.bool("tokenizer.ggml.add_bos_token", true);
        meta.bool("tokenizer.ggml.add_eos_token", false);

        let mut out = Vec::new();
        out.extend_from_slice(b"GGUF");
        out.extend_from_slice(&3u32.to_le_bytes());
        out.extend_from_slice(&(tensors.len() as u64).to_le_bytes());
        out.extend_from_slice(&meta.count.to_le_bytes());
        out.extend_from_slice(&meta.bytes);
        let mut offset = 0u64;
        for (name, dims, _) in &tensors {
            put_string(&mut out, name);
            out.extend_from_slice(&(dims.len() as u32).to_le_bytes());
            for d in dims {
                out.extend_from_slice(&d.to_le_bytes());
            }
            out.extend_from_slice(&0u32.to_le_bytes()); // F32
            out.extend_from_slice(&offset.to_le_bytes());
            offset += align(dims.iter().product::<u64>() * 4);
        }
        pad(&mut out);
        let mut rng = SplitMix(self.seed);
        for (_, dims, init) in &tensors {
            let n = dims.iter().product::<u64>();
            let scale = 1.0 / (dims[0] as f32).sqrt();
            for _ in 0..n {
                let value = match init {
                    Init::Ones => 1.0,
                    Init::Random => (rng.unit() * 2.0 - 1.0) * scale,
                };
                out.extend_from_slice(&value.to_le_bytes());
            }
            pad(&mut out);
        }
        out
    }
}

const ALIGNMENT: u64 = 32;

#[derive(Clone, Copy)]
enum Init {
    Ones,
    Random,
}

fn align(n: u64) -> u64 {
    n.div_ceil(ALIGNMENT) * ALIGNMENT
}

fn pad(out: &mut Vec<u8>) {
    out.resize(align(out.len() as u64) as usize, 0);
}

fn put_string(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u64).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// GGUF metadata, written as it is added.
#[derive(Default)]
struct Meta {
    bytes: Vec<u8>,
    count: u64,
}

impl Meta {
    fn key(&mut self, key: &str, kind: u32) {
        put_string(&mut self.bytes, key);
        self.bytes.extend_from_slice(&kind.to_le_bytes());
        self.count += 1;
    }

    fn u32(&mut self, key: &str, v: u32) {
        self.key(key, 4);
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    fn f32(&mut self, key: &str, v: f32) {
        self.key(key, 6);
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    fn bool(&mut self, key: &str, v: bool) {
        self.key(key, 7);
        self.bytes.push(u8::from(v));
    }

    fn string(&mut self, key: &str, v: &str) {
        self.key(key, 8);
        put_string(&mut self.bytes, v);
    }

    fn array(&mut self, key: &str, kind: u32, n: usize) {
        self.key(key, 9);
        self.bytes.extend_from_slice(&kind.to_le_bytes());
        self.bytes.extend_from_slice(&(n as u64).to_le_bytes());
    }

    fn strings(&mut self, key: &str, v: &[String]) {
        self.array(key, 8, v.len());
        for s in v {
            put_string(&mut self.bytes, s);
        }
    }

    fn f32s(&mut self, key: &str, v: &[f32]) {
        self.array(key, 6, v.len());
        for x in v {
            self.bytes.extend_from_slice(&x.to_le_bytes());
        }
    }

    fn i32s(&mut self, key: &str, v: &[i32]) {
        self.array(key, 5, v.len());
        for x in v {
            self.bytes.extend_from_slice(&x.to_le_bytes());
        }
    }
}

/// SplitMix64: the same weights for the same seed on every machine.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
}

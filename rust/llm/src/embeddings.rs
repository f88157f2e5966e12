//! Embeddings over HTTP: [`Client::embed`] turns texts into vectors with OpenAI's embeddings
//! API, `POST {base_url}/embeddings` — also served by Ollama's `/v1`, llama.cpp's
//! `llama-server`, LM Studio, vLLM and OpenRouter — so memories can be recalled by meaning
//! (vectors compared with [`cosine`]) as well as by their words.
//!
//! # The wire format
//!
//! The request is `{"model": …, "input": ["text a", "text b"], "encoding_format": "float"}`,
//! plus `"dimensions": n` when the caller asks for shorter vectors (models that support it
//! truncate theirs; others ignore it or refuse the request). The answer is
//! `{"object": "list", "data": [{"object": "embedding", "index": 0, "embedding": [0.1, …]}, …],
//! "model": …, "usage": {"prompt_tokens": n, "total_tokens": n}}`. The items of `data` may come
//! in any order: their `index` (the position of their input) puts them back in the inputs'
//! order. A server that numbers none of them (the field is optional in some servers' schemas)
//! is taken to send them in the inputs' order; one that numbers some only is refused.
//!
//! # What a caller may ask
//!
//! One request embeds 1 to [`MAX_INPUTS`] texts; `dimensions` and the expected dimension are 1
//! to [`MAX_DIMENSION`]; the endpoint speaks the OpenAI API (Anthropic has no embeddings
//! API). A request outside these bounds is refused before anything is sent, as
//! [`CallError::BadRequest`] with status `0` (code `brain_bad_request`, not retryable).
//!
//! # What a server may send
//!
//! The call fails like a chat completion does — the same codes for the same statuses (429 with
//! its `Retry-After`, 401 / 403, 404, 5xx, any other 4xx), a lost connection, the endpoint's
//! timeout over the whole call — and with `brain_invalid_response` for an answer that is not
//! exactly as many vectors as inputs, each indexed once, all of one dimension between 1 and
//! [`MAX_DIMENSION`] (the expected one when the caller knows it), made of finite numbers, in a
//! body of at most [`MAX_EMBEDDINGS_RESPONSE_BYTES`]. The answer is decoded as it is checked:
//! a malformed one is refused at its first fault, and it never takes more memory than
//! [`MAX_INPUTS`] × [`MAX_DIMENSION`] numbers. An `{"error": …}` body with a success status is
//! `brain_provider_error`. Error messages quote at most 200 characters of what the server sent;
//! [`CallError::public_message`] quotes none of it.

use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Value, json};

use crate::WireError;
use crate::client::{CallError, Client, Endpoint, body_excerpt, read_body, status_error};

/// The most texts one request embeds.
pub const MAX_INPUTS: usize = 256;

/// The most dimensions a vector may have (the largest models' vectors have 4,096).
pub const MAX_DIMENSION: usize = 16_384;

/// The most bytes read of an embeddings answer: [`MAX_INPUTS`] vectors of 4,096 numbers
/// written as OpenAI writes them (some 20 bytes each) fit, with room to spare. More fails the
/// call.
pub const MAX_EMBEDDINGS_RESPONSE_BYTES: usize = 64 << 20;

/// What to embed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EmbeddingRequest<'a> {
    /// The embedding model (`text-embedding-3-small`, `nomic-embed-text`, …).
    pub model: &'a str,
    /// The texts, 1 to [`MAX_INPUTS`] of them.
    pub inputs: &'a [String],
    /// Ask for vectors of this many dimensions (sent as `dimensions`; 1 to [`MAX_DIMENSION`]).
    /// `None` lets the model decide.
    pub dimensions: Option<u32>,
    /// The dimension the answer must have (1 to [`MAX_DIMENSION`]): vectors of another size
    /// fail the call, naming both sizes. `None` checks against `dimensions` when that is set,
    /// else only that all vectors have the same size.
    pub expected_dimension: Option<usize>,
}

impl<'a> EmbeddingRequest<'a> {
    /// A request for `inputs` with `model`, the dimension left to the model and not checked.
    pub fn new(model: &'a str, inputs: &'a [String]) -> Self {
        EmbeddingRequest {
            model,
            inputs,
            dimensions: None,
            expected_dimension: None,
        }
    }

    /// The dimension the answer is checked against: [`EmbeddingRequest::expected_dimension`],
    /// else [`EmbeddingRequest::dimensions`].
    pub fn checked_dimension(&self) -> Option<usize> {
        self.expected_dimension
            .or(self.dimensions.map(|d| d as usize))
    }
}

/// The vectors of a request's inputs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Embeddings {
    /// One vector per input, in the inputs' order, all of the same dimension, every number
    /// finite. As the model made them: not normalised here (OpenAI's already have length 1;
    /// see [`normalize`]).
    pub vectors: Vec<Vec<f32>>,
    /// The tokens of the inputs, as the server reported them (`usage.prompt_tokens`, else
    /// `usage.total_tokens`; 0 when it reported neither).
    pub input_tokens: u64,
}

impl Embeddings {
    /// The vectors' dimension (0 when there are none).
    pub fn dimension(&self) -> usize {
        self.vectors.first().map_or(0, Vec::len)
    }
}

impl Endpoint {
    /// The URL embeddings are requested from: `{base_url}/embeddings` for the OpenAI API (the
    /// base URL of an OpenAI-compatible server ends in `/v1`, as for chat completions).
    pub fn embeddings_url(&self) -> String {
        format!(
            "{}{}",
            self.base_url.trim_end_matches('/'),
            self.api.embeddings_path().unwrap_or("/embeddings")
        )
    }
}

impl Client {
    /// Embeds `request.inputs` with one call to [`Endpoint::embeddings_url`]: one attempt,
    /// bounded as a whole by the endpoint's timeout, its key sent as its API sends it,
    /// its extra headers as they are. Retries are the caller's, as for
    /// [`Client::complete`]. See the module docs for what is refused and how failures are
    /// reported.
    pub async fn embed(
        &self,
        endpoint: &Endpoint,
        request: &EmbeddingRequest<'_>,
    ) -> Result<Embeddings, CallError> {
        check_request(endpoint, request)?;
        let url = endpoint.embeddings_url();
        match tokio::time::timeout(endpoint.timeout, self.embed_once(endpoint, &url, request)).await
        {
            Ok(result) => result,
            Err(_) => Err(CallError::Timeout {
                url,
                seconds: endpoint.timeout.as_secs_f64(),
            }),
        }
    }

    async fn embed_once(
        &self,
        endpoint: &Endpoint,
        url: &str,
        request: &EmbeddingRequest<'_>,
    ) -> Result<Embeddings, CallError> {
        let mut builder = self
            .http
            .post(url)
            .header("content-type", "application/json")
            .body(request_body(request).to_string());
        for (name, value) in endpoint.api.headers(endpoint.api_key.as_ref()) {
            builder = builder.header(name, value);
        }
        for (name, value) in &endpoint.headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        let response = builder.send().await.map_err(|e| CallError::Unreachable {
            url: url.to_string(),
            message: crate::client::without_url(&e),
        })?;
        if !response.status().is_success() {
            return Err(status_error(response).await);
        }
        let body = read_body(response, url, MAX_EMBEDDINGS_RESPONSE_BYTES).await?;
        Ok(parse_response(
            &body,
            request.inputs.len(),
            request.checked_dimension(),
        )?)
    }
}

/// Refuses, before anything is sent, a request outside the bounds of the module docs.
fn check_request(endpoint: &Endpoint, request: &EmbeddingRequest<'_>) -> Result<(), CallError> {
    let refuse = |message: String| {
        Err(CallError::BadRequest {
            status: 0,
            message: format!("not sent: {message}"),
        })
    };
    if endpoint.api.embeddings_path().is_none() {
        return refuse(format!(
            "the {} API has no embeddings; use an OpenAI-compatible endpoint",
            endpoint.api.name()
        ));
    }
    let n = request.inputs.len();
    if n == 0 {
        return refuse("no text to embed".into());
    }
    if n > MAX_INPUTS {
        return refuse(format!(
            "{n} texts to embed in one request, at most {MAX_INPUTS}"
        ));
    }
    for (what, dimension) in [
        ("dimensions", request.dimensions.map(|d| d as usize)),
        ("expected dimension", request.expected_dimension),
    ] {
        if let Some(d) = dimension
            && !(1..=MAX_DIMENSION).contains(&d)
        {
            return refuse(format!("{what} {d} is not between 1 and {MAX_DIMENSION}"));
        }
    }
    Ok(())
}

/// The JSON body of an embeddings request: `model`, `input` (always an array, even of one
/// text), `encoding_format: "float"`, and `dimensions` when asked.
pub fn request_body(request: &EmbeddingRequest<'_>) -> Value {
    let mut body = json!({
        "model": request.model,
        "input": request.inputs,
        "encoding_format": "float",
    });
    if let Some(dimensions) = request.dimensions {
        body["dimensions"] = dimensions.into();
    }
    body
}

/// Reads an embeddings answer (`body`, as received) for `inputs` texts: the vectors in the
/// inputs' order, checked as the module docs say, against `expected_dimension` when given.
/// `{"error": …}` without `data` is [`WireError::Provider`]; everything else that is not a
/// valid answer is [`WireError::InvalidResponse`], its message saying what is wrong and where.
pub fn parse_response(
    body: &[u8],
    inputs: usize,
    expected_dimension: Option<usize>,
) -> Result<Embeddings, WireError> {
    let answer = match serde_json::from_slice::<Answer>(body) {
        Ok(answer) => answer,
        Err(e) if e.is_data() => {
            return Err(crate::invalid(format!("not an embeddings answer: {e}")));
        }
        Err(e) => {
            return Err(crate::invalid(format!(
                "the answer is not JSON ({e}): {}",
                body_excerpt(&String::from_utf8_lossy(body))
            )));
        }
    };
    let input_tokens = answer
        .usage
        .as_ref()
        .and_then(|u| {
            u.get("prompt_tokens")
                .and_then(Value::as_u64)
                .or_else(|| u.get("total_tokens").and_then(Value::as_u64))
        })
        .unwrap_or(0);
    let items = match (answer.data, answer.error) {
        (Some(items), _) => items,
        (None, Some(error)) => {
            return Err(WireError::Provider(
                crate::error_message(&json!({ "error": error }))
                    .map(|m| crate::excerpt(&m, 200))
                    .unwrap_or_else(|| crate::excerpt(&error.to_string(), 200)),
            ));
        }
        (None, None) => {
            return Err(crate::invalid(
                "the answer has no `data` (the list of embeddings)",
            ));
        }
    };
    if items.len() != inputs {
        return Err(crate::invalid(format!(
            "{} embeddings for {inputs} inputs",
            items.len()
        )));
    }
    let numbered = items.iter().filter(|item| item.index.is_some()).count();
    if numbered != 0 && numbered != items.len() {
        let position = items.iter().position(|item| item.index.is_none());
        return Err(crate::invalid(format!(
            "data[{}] has no index, while other embeddings have one",
            position.unwrap_or(0)
        )));
    }
    let mut vectors: Vec<Option<Vec<f32>>> = vec![None; inputs];
    for (position, item) in items.into_iter().enumerate() {
        let slot = item.index.unwrap_or(position as u64);
        let Some(place) = usize::try_from(slot).ok().and_then(|i| vectors.get_mut(i)) else {
            return Err(crate::invalid(format!(
                "data[{position}].index is {slot}, out of range for {inputs} inputs"
            )));
        };
        if place.is_some() {
            return Err(crate::invalid(format!("two embeddings have index {slot}")));
        }
        *place = Some(item.embedding);
    }
    // As many items as inputs, none out of range, none twice: every slot is filled.
    let vectors: Vec<Vec<f32>> = vectors.into_iter().flatten().collect();
    if vectors.len() != inputs {
        return Err(crate::invalid("an input has no embedding"));
    }
    let dimension = vectors.first().map_or(0, Vec::len);
    if let Some(expected) = expected_dimension
        && dimension != expected
        && dimension != 0
    {
        return Err(crate::invalid(format!(
            "the embeddings have {dimension} dimensions, {expected} were expected"
        )));
    }
    for (i, vector) in vectors.iter().enumerate() {
        if vector.is_empty() {
            return Err(crate::invalid(format!(
                "the embedding of input {i} is empty"
            )));
        }
        if vector.len() != dimension {
            return Err(crate::invalid(format!(
                "the embedding of input {i} has {} dimensions, that of input 0 has {dimension}",
                vector.len()
            )));
        }
    }
    Ok(Embeddings {
        vectors,
        input_tokens,
    })
}

/// The cosine of the angle between `a` and `b`: 1 for the same direction, 0 for unrelated
/// (orthogonal) vectors, -1 for opposite ones. 0 as well when it is not defined — vectors of
/// different lengths, empty, all zeros, or holding a number that is not finite — so a broken
/// vector never ranks first. Computed in `f64`, clamped to `-1.0..=1.0`.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() || a.is_empty() {
        return 0.0;
    }
    let (mut dot, mut norm_a, mut norm_b) = (0.0f64, 0.0f64, 0.0f64);
    for (&x, &y) in a.iter().zip(b) {
        let (x, y) = (f64::from(x), f64::from(y));
        dot += x * y;
        norm_a += x * x;
        norm_b += y * y;
    }
    let denominator = (norm_a * norm_b).sqrt();
    if !dot.is_finite() || !denominator.is_finite() || denominator == 0.0 {
        return 0.0;
    }
    (dot / denominator).clamp(-1.0, 1.0) as f32
}

/// Scales `v` to length 1 (its Euclidean norm), so the cosine of two normalised vectors is
/// their dot product. A vector of zeros, or holding a number that is not finite, is left as
/// it is.
pub fn normalize(v: &mut [f32]) {
    let norm = v
        .iter()
        .map(|&x| f64::from(x) * f64::from(x))
        .sum::<f64>()
        .sqrt();
    if norm.is_finite() && norm > 0.0 {
        for x in v.iter_mut() {
            *x = (f64::from(*x) / norm) as f32;
        }
    }
}

// Decoding. The answer is read straight into vectors of `f32` by these visitors, each bounded
// (at most MAX_INPUTS items, MAX_DIMENSION numbers each) and naming where a fault is.

/// The parts of an answer that are read; the others are skipped.
struct Answer {
    data: Option<Vec<Item>>,
    usage: Option<Value>,
    error: Option<Value>,
}

/// One item of `data`.
struct Item {
    index: Option<u64>,
    embedding: Vec<f32>,
}

impl<'de> de::Deserialize<'de> for Answer {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(AnswerVisitor)
    }
}

struct AnswerVisitor;

impl<'de> Visitor<'de> for AnswerVisitor {
    type Value = Answer;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an embeddings answer (a JSON object with `data`)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Answer, A::Error> {
        let mut answer = Answer {
            data: None,
            usage: None,
            error: None,
        };
        let mut seen_data = false;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "data" if seen_data => return Err(de::Error::duplicate_field("data")),
                "data" => {
                    seen_data = true;
                    answer.data = map.next_value_seed(DataSeed)?;
                }
                "usage" => answer.usage = Some(map.next_value()?),
                "error" => answer.error = Some(map.next_value::<Value>()?).filter(|e| !e.is_null()),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(answer)
    }
}

/// `data`: `null` (as if absent) or a list of at most [`MAX_INPUTS`] items.
struct DataSeed;

impl<'de> DeserializeSeed<'de> for DataSeed {
    type Value = Option<Vec<Item>>;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for DataSeed {
    type Value = Option<Vec<Item>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("`data`: a list of embeddings")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        loop {
            if items.len() == MAX_INPUTS {
                if seq.next_element::<IgnoredAny>()?.is_some() {
                    return Err(de::Error::custom(format!(
                        "more than {MAX_INPUTS} embeddings in `data`"
                    )));
                }
                break;
            }
            match seq.next_element_seed(ItemSeed(items.len()))? {
                Some(item) => items.push(item),
                None => break,
            }
        }
        Ok(Some(items))
    }
}

/// `data[position]`: an object with `embedding` and, usually, `index`.
struct ItemSeed(usize);

impl<'de> DeserializeSeed<'de> for ItemSeed {
    type Value = Item;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Item, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ItemSeed {
    type Value = Item;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "data[{}]: an object with an `embedding`", self.0)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Item, A::Error> {
        let position = self.0;
        let mut index = None;
        let mut embedding = None;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "index" if index.is_some() => return Err(de::Error::duplicate_field("index")),
                "index" => index = map.next_value_seed(IndexSeed(position))?,
                "embedding" if embedding.is_some() => {
                    return Err(de::Error::duplicate_field("embedding"));
                }
                "embedding" => embedding = Some(map.next_value_seed(VectorSeed(position))?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        match embedding {
            Some(embedding) => Ok(Item { index, embedding }),
            None => Err(de::Error::custom(format!(
                "data[{position}] has no `embedding`"
            ))),
        }
    }
}

/// `data[position].index`: a non-negative integer, or `null` (as if absent).
struct IndexSeed(usize);

impl<'de> DeserializeSeed<'de> for IndexSeed {
    type Value = Option<u64>;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for IndexSeed {
    type Value = Option<u64>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "data[{}].index: a non-negative integer", self.0)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Some(v))
    }
}

/// `data[position].embedding`: an array of 1 to [`MAX_DIMENSION`] numbers, each within the
/// range of an `f32`.
struct VectorSeed(usize);

impl<'de> DeserializeSeed<'de> for VectorSeed {
    type Value = Vec<f32>;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Vec<f32>, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for VectorSeed {
    type Value = Vec<f32>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "data[{}].embedding: an array of numbers", self.0)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Vec<f32>, E> {
        Err(E::custom(format!(
            "data[{}].embedding is a string (base64?), not an array of numbers \
             (encoding_format \"float\" was asked)",
            self.0
        )))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<f32>, A::Error> {
        let position = self.0;
        let mut vector = Vec::new();
        loop {
            if vector.len() == MAX_DIMENSION {
                if seq.next_element::<IgnoredAny>()?.is_some() {
                    return Err(de::Error::custom(format!(
                        "data[{position}].embedding has more than {MAX_DIMENSION} dimensions"
                    )));
                }
                break;
            }
            let at = vector.len();
            match seq.next_element_seed(NumberSeed(position, at))? {
                Some(x) => {
                    let x = x as f32;
                    if !x.is_finite() {
                        return Err(de::Error::custom(format!(
                            "data[{position}].embedding[{at}] is out of the range of a 32-bit \
                             float"
                        )));
                    }
                    vector.push(x);
                }
                None => break,
            }
        }
        Ok(vector)
    }
}

/// `data[position].embedding[at]`: a number.
struct NumberSeed(usize, usize);

impl<'de> DeserializeSeed<'de> for NumberSeed {
    type Value = f64;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<f64, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NumberSeed {
    type Value = f64;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "data[{}].embedding[{}]: a number", self.0, self.1)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<f64, E> {
        Ok(v)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<f64, E> {
        Ok(v as f64)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<f64, E> {
        Ok(v as f64)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::client::{CallErrorCode, Secret};

    /// An answer with `vectors` at the given indexes (`None`: no `index` field).
    fn answer(items: &[(Option<u64>, Value)]) -> Vec<u8> {
        let data: Vec<Value> = items
            .iter()
            .map(|(index, embedding)| {
                let mut item = json!({"object": "embedding", "embedding": embedding});
                if let Some(index) = index {
                    item["index"] = (*index).into();
                }
                item
            })
            .collect();
        json!({"object": "list", "data": data, "model": "m",
               "usage": {"prompt_tokens": 7, "total_tokens": 7}})
        .to_string()
        .into_bytes()
    }

    fn invalid_message(result: Result<Embeddings, WireError>) -> String {
        match result {
            Err(WireError::InvalidResponse(message)) => message,
            other => panic!("expected an invalid response, got {other:?}"),
        }
    }

    #[test]
    fn a_good_answer_in_order() {
        let body = answer(&[
            (Some(0), json!([0.5, -0.25, 1])),
            (Some(1), json!([0.0, 2e-3, -1e-2])),
        ]);
        let got = parse_response(&body, 2, Some(3)).unwrap();
        assert_eq!(
            got.vectors,
            vec![vec![0.5, -0.25, 1.0], vec![0.0, 0.002, -0.01]]
        );
        assert_eq!(got.input_tokens, 7);
        assert_eq!(got.dimension(), 3);
    }

    #[test]
    fn shuffled_indexes_are_put_back_in_the_inputs_order() {
        let body = answer(&[
            (Some(2), json!([3.0, 3.0])),
            (Some(0), json!([1.0, 1.0])),
            (Some(1), json!([2.0, 2.0])),
        ]);
        let got = parse_response(&body, 3, None).unwrap();
        let firsts: Vec<f32> = got.vectors.iter().map(|v| v[0]).collect();
        assert_eq!(firsts, [1.0, 2.0, 3.0]);
    }

    #[test]
    fn no_index_at_all_means_the_inputs_order_and_usage_is_optional() {
        let body = br#"{"data": [{"embedding": [1, 0]}, {"embedding": [0, 1], "index": null}]}"#;
        let got = parse_response(body, 2, None).unwrap();
        assert_eq!(got.vectors, vec![vec![1.0, 0.0], vec![0.0, 1.0]]);
        assert_eq!(got.input_tokens, 0);
        let total_only = br#"{"data": [{"embedding": [1]}], "usage": {"total_tokens": 4}}"#;
        assert_eq!(parse_response(total_only, 1, None).unwrap().input_tokens, 4);
    }

    #[test]
    fn bad_indexes_are_refused() {
        let v = json!([1.0]);
        let mixed = answer(&[(Some(0), v.clone()), (None, v.clone())]);
        assert!(invalid_message(parse_response(&mixed, 2, None)).contains("data[1] has no index"));
        let twice = answer(&[(Some(1), v.clone()), (Some(1), v.clone())]);
        assert_eq!(
            invalid_message(parse_response(&twice, 2, None)),
            "two embeddings have index 1"
        );
        let out = answer(&[(Some(0), v.clone()), (Some(2), v.clone())]);
        assert_eq!(
            invalid_message(parse_response(&out, 2, None)),
            "data[1].index is 2, out of range for 2 inputs"
        );
        let huge = answer(&[(Some(u64::MAX), v.clone())]);
        assert!(invalid_message(parse_response(&huge, 1, None)).contains("out of range"));
        let negative = br#"{"data": [{"index": -1, "embedding": [1]}]}"#;
        let message = invalid_message(parse_response(negative, 1, None));
        assert!(
            message.contains("data[0].index: a non-negative integer"),
            "{message}"
        );
        let text = br#"{"data": [{"index": "0", "embedding": [1]}]}"#;
        assert!(invalid_message(parse_response(text, 1, None)).contains("data[0].index"));
    }

    #[test]
    fn the_count_must_match_the_inputs() {
        let v = json!([1.0]);
        let two = answer(&[(Some(0), v.clone()), (Some(1), v.clone())]);
        assert_eq!(
            invalid_message(parse_response(&two, 3, None)),
            "2 embeddings for 3 inputs"
        );
        assert_eq!(
            invalid_message(parse_response(&two, 1, None)),
            "2 embeddings for 1 inputs"
        );
        let too_many: Vec<(Option<u64>, Value)> = (0..=MAX_INPUTS as u64)
            .map(|i| (Some(i), v.clone()))
            .collect();
        let message = invalid_message(parse_response(&answer(&too_many), MAX_INPUTS, None));
        assert!(message.contains("more than 256 embeddings"), "{message}");
    }

    #[test]
    fn not_json_and_not_the_format() {
        let message = invalid_message(parse_response(b"<html>502 Bad Gateway</html>", 1, None));
        assert!(message.starts_with("the answer is not JSON"), "{message}");
        assert!(
            message.contains("502 Bad Gateway"),
            "the log quotes it: {message}"
        );
        let long = "x".repeat(10_000);
        let message = invalid_message(parse_response(long.as_bytes(), 1, None));
        assert!(
            message.len() < 600,
            "the quote is bounded: {}",
            message.len()
        );
        let message = invalid_message(parse_response(b"", 1, None));
        assert!(message.contains("(empty body)"), "{message}");
        for body in [&b"[1, 2]"[..], b"\"list\"", b"42", b"null"] {
            let message = invalid_message(parse_response(body, 1, None));
            assert!(message.starts_with("not an embeddings answer"), "{message}");
        }
        for body in [&br#"{"object": "list"}"#[..], br#"{"data": null}"#] {
            assert_eq!(
                invalid_message(parse_response(body, 1, None)),
                "the answer has no `data` (the list of embeddings)"
            );
        }
        let message = invalid_message(parse_response(br#"{"data": {"0": [1]}}"#, 1, None));
        assert!(message.contains("a list of embeddings"), "{message}");
        let message = invalid_message(parse_response(br#"{"data": [{"index": 0}]}"#, 1, None));
        assert!(message.contains("data[0] has no `embedding`"), "{message}");
        let message = invalid_message(parse_response(br#"{"data": [], "data": []}"#, 0, None));
        assert!(message.contains("duplicate field `data`"), "{message}");
    }

    #[test]
    fn an_error_body_with_a_success_status_is_the_providers() {
        let body = br#"{"error": {"message": "input too long", "type": "invalid_request_error"}}"#;
        assert_eq!(
            parse_response(body, 1, None),
            Err(WireError::Provider("input too long".into()))
        );
        let ollama = br#"{"error": "model \"nomic\" not found"}"#;
        assert_eq!(
            parse_response(ollama, 1, None),
            Err(WireError::Provider("model \"nomic\" not found".into()))
        );
    }

    #[test]
    fn embeddings_must_be_arrays_of_finite_numbers() {
        let cases = [
            (json!("AAAAPwAAgD8="), "is a string (base64?)"),
            (json!({"0": 1.0}), "data[0].embedding: an array of numbers"),
            (json!(null), "data[0].embedding: an array of numbers"),
            (json!([0.1, "0.2"]), "data[0].embedding[1]: a number"),
            (json!([0.1, null]), "data[0].embedding[1]: a number"),
            (json!([[0.1], [0.2]]), "data[0].embedding[0]: a number"),
            (
                json!([1e39]),
                "data[0].embedding[0] is out of the range of a 32-bit float",
            ),
        ];
        for (embedding, expected) in cases {
            let body = answer(&[(Some(0), embedding.clone())]);
            let message = invalid_message(parse_response(&body, 1, None));
            assert!(message.contains(expected), "{embedding}: {message}");
        }
        // Not even JSON numbers.
        let message = invalid_message(parse_response(
            br#"{"data": [{"embedding": [NaN]}]}"#,
            1,
            None,
        ));
        assert!(message.starts_with("the answer is not JSON"), "{message}");
        let message = invalid_message(parse_response(
            br#"{"data": [{"embedding": [1e400]}]}"#,
            1,
            None,
        ));
        assert!(message.starts_with("the answer is not JSON"), "{message}");
    }

    #[test]
    fn dimensions_are_checked() {
        let empty = answer(&[(Some(0), json!([1.0])), (Some(1), json!([]))]);
        let message = invalid_message(parse_response(&empty, 2, None));
        assert_eq!(message, "the embedding of input 1 is empty");
        let all_empty = answer(&[(Some(0), json!([]))]);
        assert_eq!(
            invalid_message(parse_response(&all_empty, 1, Some(3))),
            "the embedding of input 0 is empty"
        );
        let uneven = answer(&[(Some(1), json!([1.0, 2.0])), (Some(0), json!([1.0]))]);
        assert_eq!(
            invalid_message(parse_response(&uneven, 2, None)),
            "the embedding of input 1 has 2 dimensions, that of input 0 has 1"
        );
        let three = answer(&[(Some(0), json!([1.0, 2.0, 3.0]))]);
        assert_eq!(
            invalid_message(parse_response(&three, 1, Some(768))),
            "the embeddings have 3 dimensions, 768 were expected"
        );
        let at_most = vec![0.5f32; MAX_DIMENSION];
        let body = answer(&[(Some(0), json!(at_most))]);
        assert_eq!(
            parse_response(&body, 1, None).unwrap().dimension(),
            MAX_DIMENSION
        );
        let over = vec![0.5f32; MAX_DIMENSION + 1];
        let body = answer(&[(Some(0), json!(over))]);
        let message = invalid_message(parse_response(&body, 1, None));
        assert!(
            message.contains("data[0].embedding has more than 16384 dimensions"),
            "{message}"
        );
    }

    #[test]
    fn deeply_nested_json_is_refused_without_a_crash() {
        let deep = "[".repeat(100_000) + &"]".repeat(100_000);
        for body in [
            deep.clone(),
            format!(r#"{{"data": [{{"embedding": {deep}}}]}}"#),
            format!(r#"{{"data": [], "usage": {deep}}}"#),
            format!(r#"{{"error": {deep}}}"#),
        ] {
            let message = invalid_message(parse_response(body.as_bytes(), 1, None));
            assert!(message.len() < 600, "{}", message.len());
        }
        // A field that is not read is skipped, however deep.
        let ignored = format!(r#"{{"data": [{{"embedding": [1], "object": {deep}}}]}}"#);
        assert_eq!(
            parse_response(ignored.as_bytes(), 1, None).unwrap().vectors,
            [[1.0]]
        );
    }

    #[test]
    fn the_request_body() {
        let inputs = vec!["a cat".to_string(), "two dogs".to_string()];
        let mut request = EmbeddingRequest::new("nomic-embed-text", &inputs);
        assert_eq!(
            request_body(&request),
            json!({"model": "nomic-embed-text", "input": ["a cat", "two dogs"],
                   "encoding_format": "float"})
        );
        assert_eq!(request.checked_dimension(), None);
        request.dimensions = Some(256);
        assert_eq!(request_body(&request)["dimensions"], 256);
        assert_eq!(request.checked_dimension(), Some(256));
        request.expected_dimension = Some(512);
        assert_eq!(request.checked_dimension(), Some(512));
    }

    #[test]
    fn requests_out_of_bounds_are_refused_before_sending() {
        let mut endpoint = Endpoint {
            api: std::sync::Arc::new(crate::openai::API),
            base_url: "http://127.0.0.1:1/v1/".into(),
            api_key: Some(Secret::new("sk-x")),
            headers: vec![],
            timeout: Duration::from_secs(1),
        };
        assert_eq!(
            endpoint.embeddings_url(),
            "http://127.0.0.1:1/v1/embeddings"
        );
        let one = vec!["hello".to_string()];
        let many = vec!["hello".to_string(); MAX_INPUTS + 1];
        let bounds = vec!["hello".to_string(); MAX_INPUTS];
        assert!(check_request(&endpoint, &EmbeddingRequest::new("m", &one)).is_ok());
        assert!(check_request(&endpoint, &EmbeddingRequest::new("m", &bounds)).is_ok());
        let refused = |endpoint: &Endpoint, request: EmbeddingRequest<'_>| {
            let e = check_request(endpoint, &request).unwrap_err();
            assert_eq!(e.code(), CallErrorCode::BadRequest);
            assert!(!e.retryable());
            e.to_string()
        };
        assert!(refused(&endpoint, EmbeddingRequest::new("m", &[])).contains("no text"));
        assert!(refused(&endpoint, EmbeddingRequest::new("m", &many)).contains("257 texts"));
        for (dimensions, expected) in [(Some(0), None), (Some(16_385), None), (None, Some(0))] {
            let request = EmbeddingRequest {
                dimensions,
                expected_dimension: expected,
                ..EmbeddingRequest::new("m", &one)
            };
            assert!(refused(&endpoint, request).contains("between 1 and 16384"));
        }
        endpoint.api = std::sync::Arc::new(crate::anthropic::API);
        assert!(
            refused(&endpoint, EmbeddingRequest::new("m", &one))
                .contains("anthropic API has no embeddings")
        );
    }

    #[test]
    fn cosine_of_vectors() {
        let close = |a: f32, b: f32| (a - b).abs() < 1e-6;
        assert!(close(cosine(&[1.0, 0.0], &[2.0, 0.0]), 1.0));
        assert!(close(cosine(&[1.0, 0.0], &[0.0, 3.0]), 0.0));
        assert!(close(cosine(&[1.0, 1.0], &[-1.0, -1.0]), -1.0));
        assert!(close(
            cosine(&[1.0, 1.0], &[1.0, 0.0]),
            std::f32::consts::FRAC_1_SQRT_2
        ));
        // Undefined: 0.
        assert_eq!(cosine(&[1.0, 0.0], &[1.0]), 0.0);
        assert_eq!(cosine(&[], &[]), 0.0);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
        assert_eq!(cosine(&[f32::NAN, 1.0], &[1.0, 1.0]), 0.0);
        assert_eq!(cosine(&[f32::INFINITY, 1.0], &[1.0, 1.0]), 0.0);
        // Large components do not overflow (computed in f64).
        assert!(close(cosine(&[3e38, 3e38], &[3e38, 3e38]), 1.0));
    }

    #[test]
    fn normalize_makes_unit_vectors() {
        let mut v = [3.0f32, 4.0];
        normalize(&mut v);
        assert_eq!(v, [0.6, 0.8]);
        let mut big = [3e38f32, 3e38];
        normalize(&mut big);
        assert!((big[0] - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
        let mut zeros = [0.0f32; 3];
        normalize(&mut zeros);
        assert_eq!(zeros, [0.0; 3]);
        let mut broken = [f32::NAN, 1.0];
        normalize(&mut broken);
        assert_eq!(broken[1], 1.0);
        let mut empty: [f32; 0] = [];
        normalize(&mut empty);
        // After normalising, the cosine is the dot product.
        let (mut a, mut b) = ([1.0f32, 2.0, 3.0], [-2.0f32, 0.5, 4.0]);
        let expected = cosine(&a, &b);
        normalize(&mut a);
        normalize(&mut b);
        let dot: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot - expected).abs() < 1e-6);
    }
}

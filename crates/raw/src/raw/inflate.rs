//! Inflating a raw file within the memory budget. One file may inflate to at most
//! `MAX_INFLATED_BYTES`; and the files the landing's threads hold inflated at once share one pool
//! of bytes cut from the budget (a quarter of it), so that many threads reading gzip bombs
//! together stay within it. A file waits for room before it inflates; one that could never fit
//! the pool is refused, naming the budget.

use super::{INFLATES_PAST, MAX_INFLATED_BYTES};
use color_eyre::eyre::{Result, bail};
use std::borrow::Cow;
use std::sync::{Condvar, Mutex};

/// A file's inflated bytes, holding their room in the pool until dropped.
pub struct Inflated<'a> {
    bytes: Cow<'a, [u8]>,
    _held: Option<Held>,
}

impl std::ops::Deref for Inflated<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.bytes
    }
}

impl Inflated<'_> {
    /// The bytes, their room given back (for a small file read whole, or a test).
    pub fn into_vec(self) -> Vec<u8> {
        self.bytes.into_owned()
    }

    /// Bytes that needed no inflating: no room taken.
    pub fn borrowed(bytes: &[u8]) -> Inflated<'_> {
        Inflated { bytes: Cow::Borrowed(bytes), _held: None }
    }
}

/// The pool: bytes free, and the waiters for room.
struct Pool {
    free: Mutex<u64>,
    freed: Condvar,
}

static POOL: std::sync::OnceLock<(Pool, u64)> = std::sync::OnceLock::new();

/// The pool, sized on first use from the memory budget.
fn pool() -> &'static (Pool, u64) {
    POOL.get_or_init(|| {
        let room = inflate_room();
        (Pool { free: Mutex::new(room), freed: Condvar::new() }, room)
    })
}

/// The bytes the inflated files of all threads may hold at once: a quarter of the memory
/// budget, at least 16 MiB.
pub fn inflate_room() -> u64 {
    (crate::store::memory_budget() / 4).max(16 << 20)
}

/// Room for `n` bytes, given back when dropped.
struct Held(u64);

impl Drop for Held {
    fn drop(&mut self) {
        let (p, _) = pool();
        let mut free = p.free.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        *free += self.0;
        p.freed.notify_all();
    }
}

/// Waits for room for `n` bytes. Only a caller that holds no room waits, so no two threads can
/// wait on each other.
fn hold(n: u64) -> Held {
    let (p, _) = pool();
    let mut free = p.free.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    while *free < n {
        free = p.freed.wait(free).unwrap_or_else(std::sync::PoisonError::into_inner);
    }
    *free -= n;
    Held(n)
}

/// The most one file may inflate to: `MAX_INFLATED_BYTES`, or the whole pool when that is less.
fn file_limit() -> usize {
    usize::try_from(pool().1).unwrap_or(usize::MAX).min(MAX_INFLATED_BYTES)
}

/// `inflate(bytes, cap)` within room held for it: tried first with room for `first` bytes, and
/// while the file inflates past the room held, again with twice the room (given back first, so
/// a waiting thread holds nothing), up to the file limit.
fn within_pool(bytes: &[u8], first: usize, inflate: fn(&[u8], usize) -> Result<Vec<u8>>) -> Result<Inflated<'static>> {
    let limit = file_limit();
    let mut cap = first.clamp(1024, limit);
    loop {
        let held = hold(cap as u64);
        match inflate(bytes, cap) {
            Ok(out) => return Ok(Inflated { bytes: Cow::Owned(out), _held: Some(held) }),
            Err(e) if cap < limit && e.to_string().starts_with(INFLATES_PAST) => {
                drop(held);
                cap = cap.saturating_mul(2).min(limit);
            }
            Err(e) if e.to_string().starts_with(INFLATES_PAST) && limit < MAX_INFLATED_BYTES => {
                bail!("{INFLATES_PAST} {} MiB, the most one raw file may hold within the memory budget (give --memory more)", limit >> 20)
            }
            Err(e) => return Err(e),
        }
    }
}

/// A gzip file's bytes inflated, at most the file limit of them, within the pool. Not decoded:
/// a raw file's lines are decoded one by one (`split_lines`).
pub fn decompress(bytes: &[u8]) -> Result<Inflated<'static>> {
    // ISIZE, the last member's size mod 2^32: the usual file's exact size, so one try.
    let trailer =
        bytes.len().checked_sub(4).and_then(|i| <[u8; 4]>::try_from(&bytes[i..]).ok()).map_or(0, |b| u32::from_le_bytes(b) as usize);
    within_pool(bytes, trailer, gunzip)
}

/// A Zstandard file's bytes inflated, at most the file limit of them, within the pool.
pub fn unzstd(bytes: &[u8]) -> Result<Inflated<'static>> {
    within_pool(bytes, bytes.len().saturating_mul(4), unzstd_within)
}

/// Every gzip member of `bytes`, one after another (a file may be several members end to end).
/// libdeflate inflates a whole member at once, about twice as fast as a streaming decoder: each
/// member gets a buffer of the size its trailer gives, and a bigger one if that was short.
#[allow(non_upper_case_globals)] // libdeflate's result codes, as bindgen names them
pub(super) fn gunzip(bytes: &[u8], limit: usize) -> Result<Vec<u8>> {
    use libdeflate_sys::*;
    struct Decompressor(*mut libdeflate_decompressor);
    impl Drop for Decompressor {
        fn drop(&mut self) {
            // SAFETY: allocated by libdeflate_alloc_decompressor below, freed once.
            unsafe { libdeflate_free_decompressor(self.0) }
        }
    }
    // SAFETY: plain allocation; NULL is checked.
    let d = Decompressor(unsafe { libdeflate_alloc_decompressor() });
    if d.0.is_null() {
        bail!("out of memory for a gzip decoder");
    }
    if bytes.is_empty() {
        bail!("empty file: not a gzip stream");
    }
    // ISIZE, the last member's size mod 2^32: exact for a file of one member under 4 GiB. No
    // member can inflate to more than 1,032 times its size (DEFLATE's limit), so a corrupt
    // trailer cannot ask for more than that, and a buffer that big that is still short is an error.
    let most = |compressed: usize| compressed.saturating_mul(1032).saturating_add(1024);
    // Never more than the limit in all (one byte over it tells a file that is too big).
    let room = |made: usize, want: usize| want.min(limit.saturating_add(1).saturating_sub(made));
    let trailer =
        bytes.len().checked_sub(4).and_then(|i| <[u8; 4]>::try_from(&bytes[i..]).ok()).map(|b| u32::from_le_bytes(b) as usize).unwrap_or(0);
    let mut out: Vec<u8> = Vec::new();
    let mut rest = bytes;
    let mut guess = room(0, trailer.max(1024).min(most(rest.len())));
    while !rest.is_empty() {
        let start = out.len();
        if start > limit || guess == 0 {
            bail!("{INFLATES_PAST} {} MiB, the most one raw file may hold", limit >> 20);
        }
        out.reserve(guess);
        let (mut used, mut made) = (0usize, 0usize);
        // SAFETY: the pointers and lengths describe `rest` and `guess` bytes of spare capacity
        // of `out`; libdeflate writes `made` bytes there on success, and nothing is read before.
        let r = unsafe {
            libdeflate_gzip_decompress_ex(
                d.0,
                rest.as_ptr().cast(),
                rest.len(),
                out.as_mut_ptr().add(start).cast(),
                guess,
                &mut used,
                &mut made,
            )
        };
        match r {
            libdeflate_result_LIBDEFLATE_SUCCESS => {
                // SAFETY: libdeflate initialised these `made` bytes.
                unsafe { out.set_len(start + made) };
                rest = &rest[used..];
                guess = room(out.len(), trailer.max(1024).min(most(rest.len())));
            }
            libdeflate_result_LIBDEFLATE_INSUFFICIENT_SPACE if guess < room(start, most(rest.len())) => {
                guess = room(start, guess.saturating_mul(2).min(most(rest.len())));
            }
            libdeflate_result_LIBDEFLATE_INSUFFICIENT_SPACE if start + guess > limit => {
                bail!("{INFLATES_PAST} {} MiB, the most one raw file may hold", limit >> 20);
            }
            _ => bail!("not a complete gzip stream (bad header, data or checksum, or cut short)"),
        }
    }
    Ok(out)
}

/// A Zstandard file's bytes inflated, at most `limit` of them (one more tells a file too big).
fn unzstd_within(bytes: &[u8], limit: usize) -> Result<Vec<u8>> {
    use std::io::Read;
    let mut src = bytes;
    let decoder = ruzstd::decoding::StreamingDecoder::new(&mut src).map_err(|e| color_eyre::eyre::eyre!("{e}"))?;
    let mut out = Vec::new();
    decoder.take(limit as u64 + 1).read_to_end(&mut out)?;
    if out.len() > limit {
        bail!("{INFLATES_PAST} {} MiB, the most one raw file may hold", limit >> 20);
    }
    Ok(out)
}

//! Arbitrary bytes read as a sequence of small decisions.
//!
//! Every read succeeds: once the bytes run out, each read returns its smallest value, so any
//! input (the empty one included) decodes to a case, and a case never grows without bound. The
//! first bytes decide the coarse shape of a case, so AFL++'s mutations of a seed stay close to it.

/// The bytes of one input, consumed from the front.
#[derive(Debug, Clone)]
pub struct Input<'a> {
    data: &'a [u8],
}

impl<'a> Input<'a> {
    /// An input over `data`.
    pub fn new(data: &'a [u8]) -> Input<'a> {
        Input { data }
    }

    /// Whether every byte has been read.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The next byte, or 0 once the input is exhausted.
    pub fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    /// A number below `n` (0 when `n` is 0 or 1): one byte for `n` up to 256, two above.
    pub fn below(&mut self, n: usize) -> usize {
        match n {
            0 | 1 => 0,
            2..=256 => usize::from(self.byte()) % n,
            _ => (usize::from(self.byte()) << 8 | usize::from(self.byte())) % n,
        }
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability about `num`/`den`.
    pub fn chance(&mut self, num: usize, den: usize) -> bool {
        self.below(den) < num
    }

    /// One of `items`, which must not be empty.
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }

    /// Up to `n` raw bytes (fewer when the input runs out).
    pub fn bytes(&mut self, n: usize) -> &'a [u8] {
        let (head, rest) = self.data.split_at(n.min(self.data.len()));
        self.data = rest;
        head
    }

    /// A string of `n` pieces, each one of `pieces` or (with `raw` set, now and then) a few raw
    /// bytes read as UTF-8, lossily.
    pub fn text(&mut self, pieces: &[&str], n: usize, raw: bool) -> String {
        let mut out = String::new();
        for _ in 0..n {
            if raw && self.chance(1, 8) {
                let k = self.below(4) + 1;
                out.push_str(&String::from_utf8_lossy(self.bytes(k)));
            } else {
                out.push_str(self.pick(pieces));
            }
        }
        out
    }
}

/// A small deterministic generator of inputs, for the test that runs each target on inputs
/// beyond its corpus: xorshift64*, seeded per target so that a failure is reproducible.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed` (any value; 0 is mapped to another).
    pub fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number below `n` (which must not be 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// `n` random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }

    /// `seed` with a few random byte flips, insertions and deletions, as a fuzzer would mutate it.
    pub fn mutate(&mut self, seed: &[u8]) -> Vec<u8> {
        let mut out = seed.to_vec();
        for _ in 0..=self.below(4) {
            let at = if out.is_empty() { 0 } else { self.below(out.len() + 1) };
            match self.below(3) {
                0 if at < out.len() => out[at] = self.next_u64() as u8,
                1 => out.insert(at, self.next_u64() as u8),
                _ if at < out.len() => {
                    out.remove(at);
                }
                _ => out.push(self.next_u64() as u8),
            }
        }
        out
    }
}

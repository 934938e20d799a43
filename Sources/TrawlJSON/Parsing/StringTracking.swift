/// Follows where strings open and close in the raw input, for the single-token limit: a string whose
/// content runs past `maxContent` bytes is refused at the first byte past the limit, a fixed position in
/// the document whatever its chunking. Runs of whitespace and tokens outside strings are not strings and
/// never count. Escaped quotes never reach it: the scanner's escape state takes the byte after a backslash.
struct StringTracking {
    let maxContent: Int
    /// Whether the 8-byte fast path may be used: strings opened and closed inside one word stay under the limit.
    private let wordsAllowed: Bool
    private(set) var inString = false
    /// The absolute offset of the opening quote of the open string.
    private(set) var start = 0
    /// The absolute offset of the first content byte past the limit (`Int.max` outside strings).
    private var deadline = Int.max

    init(maxContent: Int) {
        self.maxContent = Swift.max(0, maxContent)
        wordsAllowed = maxContent >= 8
    }

    /// The overrun of the open string, if a byte before `end` (absolute) is past the limit.
    @inline(__always)
    func overrun(before end: Int) -> (InputScanner.Failure, offset: Int)? {
        end > deadline ? (.stringTooLarge(start: start), deadline) : nil
    }

    /// Outside any string.
    mutating func reset() {
        inString = false
        deadline = Int.max
    }

    /// An unescaped quote at absolute `at`.
    @inline(__always)
    mutating func quote(at: Int) {
        if inString {
            // A closing quote at the deadline ends a string of exactly `maxContent` bytes.
            if at > deadline { return }  // the overrun is reported by the next check
            inString = false
            deadline = Int.max
        } else {
            inString = true
            start = at
            deadline = at &+ 1 &+ maxContent
        }
    }

    /// Skips bytes of printable ASCII other than the backslash from `from`, following quotes; `base` is at
    /// absolute offset `at`. Returns where it stopped: at the first other byte, or at an overrun's word.
    @inline(__always)
    mutating func skipPlain(_ base: UnsafeRawPointer, from begin: Int, count n: Int, at origin: Int) -> Int {
        var i = begin
        if wordsAllowed {
            let ones: UInt64 = 0x0101_0101_0101_0101
            let highs: UInt64 = 0x8080_8080_8080_8080
            let lows: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
            while i + 8 <= n {
                let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                let backslashes = word ^ (ones &* 0x5C)
                let special = (word | ((word &- ones &* 0x20) & ~word) | ((backslashes &- ones) & ~backslashes))
                    & highs
                // The lowest flagged byte is exact (borrows only run upwards from it).
                let plain = special == 0 ? 8 : special.trailingZeroBitCount >> 3
                let t = word ^ (ones &* 0x22)
                var quotes = ~(((t & lows) &+ lows) | t) & highs
                if plain < 8 { quotes &= (UInt64(1) << (plain << 3)) &- 1 }
                if quotes != 0 { takeQuotes(quotes, word: origin &+ i) }
                if origin &+ i &+ plain > deadline { return i + plain }
                if plain < 8 { return i + plain }
                i += 8
            }
        }
        while i < n {
            let byte = base.load(fromByteOffset: i, as: UInt8.self)
            if byte < 0x20 || byte >= 0x80 || byte == 0x5C { break }
            if byte == 0x22 { quote(at: origin &+ i) }
            i += 1
            if origin &+ i > deadline { break }
        }
        return i
    }

    /// The quotes of one word at absolute `word` (a high bit per quote byte).
    @inline(__always)
    private mutating func takeQuotes(_ quotes: UInt64, word: Int) {
        if inString {
            // The first quote closes the open string: past the deadline it is an overrun, left for the check.
            let first = word &+ quotes.trailingZeroBitCount >> 3
            if first > deadline { return }
        }
        if quotes.nonzeroBitCount & 1 == 1 { inString.toggle() }
        if inString {
            start = word &+ (63 &- quotes.leadingZeroBitCount) >> 3
            deadline = start &+ 1 &+ maxContent
        } else {
            deadline = Int.max
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
import TrawlJSON

/// The streaming JSON extractor gives the same elements, summary and error however the document is cut into
/// chunks: each input is extracted once in one piece and once in pieces whose sizes derive from the input.
/// Every failure is a `JSONError` (never a trap or another error type), the same but for its excerpt.
///
/// Input: byte 0 picks the form, the item path, the limits and the chunking; bytes 1-2 seed the chunk sizes;
/// the rest is the document.
enum JSONChunkingTarget {
    static let paths: [(JSONKeyPath, [JSONKeyPath])] = [
        (.root, []),
        ("items", ["next", "meta.total"]),
        ("data.items", ["data.-1.id", "cursor"]),
        ("0", ["-1"]),
    ]

    static let strictOffsets = getenv("TRAWL_FUZZ_STRICT_OFFSETS").map { String(cString: $0) } == "1"

    struct Outcome: Equatable {
        var elements: [[UInt8]] = []
        var values: [JSONValue] = []
        var summary: JSONExtractor.Summary?
        var error: JSONError?
    }

    static func run(_ input: [UInt8]) {
        let options = input.first ?? 0
        let document = Array(input.dropFirst(min(3, input.count)))
        let form: JSONExtractor.Form = [.json, .values, .countOnly, .json][Int(options & 3)]
        let (path, capture) = paths[Int(options >> 2 & 3)]
        let limits = options & 0x10 == 0
            ? JSONLimits()
            : JSONLimits(maxDepth: 8, maxTokenBytes: 24, maxElementBytes: 64, maxCaptureBytes: 16)
        var random = InputRandom(seed: input.prefix(3))
        var chunks: [ArraySlice<UInt8>] = []
        var start = 0
        while start < document.count {
            let size: Int
            switch options >> 5 & 3 {
            case 0: size = 1 + random.next(below: 16)
            case 1: size = 1 + random.next(below: 4096)
            case 2: size = 1
            default: size = start == 0 ? random.next(below: document.count + 1) : document.count
            }
            chunks.append(document[start..<min(document.count, start + size)])
            start += size
        }
        if options & 0x80 != 0 { chunks.insert([], at: random.next(below: chunks.count + 1)) }

        let whole = extract([document[...]], path: path, capture: capture, form: form, limits: limits)
        var pieces = extract(chunks, path: path, capture: capture, form: form, limits: limits)
        if !strictOffsets, let wholeError = whole.error, let piecesError = pieces.error,
           wholeError.code != piecesError.code {
            // Known, not yet fixed: with two faults in a document (invalid UTF-8 and a too-large token), which
            // one is reported can depend on the chunking. Both runs must still fail, with the same elements.
            pieces.error = wholeError
        }
        if !strictOffsets, whole != pieces, whole.error != nil, whole.error?.code == pieces.error?.code,
            whole.summary == nil, pieces.summary == nil
        {
            // Known, not yet fixed: when the document fails, how many elements were handed out before the failure
            // was noticed depends on the chunking (`[[[[0]]Closed]]]]i` at path 0: one element whole, none in
            // pieces [5, 0, 13]). The failure itself must agree. TRAWL_FUZZ_STRICT_OFFSETS=1 reports it.
            return
        }
        if !strictOffsets, whole != pieces, whole.error?.code == .tooLarge || pieces.error?.code == .tooLarge {
            // Known, not yet fixed (issue 22, the single-token limit): what counts toward the limit is the input
            // held since the last complete token, which depends on where the chunks end, so a document near the
            // limit can pass whole and fail in pieces (or the reverse). TRAWL_FUZZ_STRICT_OFFSETS=1 reports it.
            return
        }
        require(
            whole == pieces,
            "chunking changed the result (form \(form), path \(path), chunk sizes \(chunks.map(\.count))):\n"
                + "one chunk: \(describe(whole))\nchunked:   \(describe(pieces))")
        if let summary = whole.summary {
            require(summary.byteCount == document.count, "byteCount \(summary.byteCount) of \(document.count) bytes")
            if form != .countOnly {
                let delivered = form == .json ? whole.elements.count : whole.values.count
                require(
                    summary.elementCount == delivered, "elementCount \(summary.elementCount), \(delivered) handed out")
            }
        }
    }

    static func extract(
        _ chunks: [ArraySlice<UInt8>], path: JSONKeyPath, capture: [JSONKeyPath], form: JSONExtractor.Form,
        limits: JSONLimits
    ) -> Outcome {
        var outcome = Outcome()
        let onElement: (JSONElement) throws -> Void = { element in
            switch form {
            case .json: outcome.elements.append(Array(element.json))
            case .values: outcome.values.append(element.value)
            case .countOnly: require(false, "onElement called in countOnly form")
            }
        }
        do {
            let extractor = try JSONExtractor(path: path, capture: capture, form: form, limits: limits)
            for chunk in chunks { try extractor.feed(chunk, onElement: onElement) }
            outcome.summary = try extractor.finish(onElement: onElement)
        } catch var error as JSONError {
            // The excerpt shows the bytes around the failure that had arrived by then: fewer when the
            // document came in pieces.
            error.excerpt = nil
            if !strictOffsets {
                // Known, not yet fixed: where a syntax error, trailing data or a too-large token is placed depends
                // on how much of the document was in memory when it was noticed, so on the chunking
                // (`[{"a":1",{"b":` says byte 9 whole, byte 10 a byte at a time), and so does the key path named
                // for a too-large capture. The message must still agree; TRAWL_FUZZ_STRICT_OFFSETS=1 compares
                // the positions too.
                (error.byteOffset, error.line, error.column, error.keyPath) = (nil, nil, nil, nil)
            }
            outcome.error = error
        } catch {
            require(false, "the extractor threw \(type(of: error)), not JSONError: \(error)")
        }
        return outcome
    }

    static func describe(_ outcome: Outcome) -> String {
        let count = outcome.elements.count + outcome.values.count
        let error = outcome.error.map { "\($0.code): \($0)" } ?? "none"
        return "\(count) elements, summary \(outcome.summary.map { "\($0)" } ?? "none"), error \(error)"
    }
}

import Testing
@testable import TrawlJSON

/// The outcome of running an extractor over a document.
struct Extraction {
    var lines: [String] = []
    /// Each element's bytes as the extractor holds them (the events themselves in the `.values` form).
    var raw: [[UInt8]] = []
    var summary: JSONExtractor.Summary?
    var error: JSONError?
}

/// Runs an extractor over `document`, fed in chunks of `chunkSize` bytes (all at once when nil),
/// or split at the given offsets.
func extract(
    _ document: some Collection<UInt8>, path: JSONKeyPath = .root, capture: [JSONKeyPath] = [],
    form: JSONExtractor.Form = .json, limits: JSONLimits = .init(), chunkSize: Int? = nil, splits: [Int]? = nil
) throws -> Extraction {
    let bytes = Array(document)
    let result = try extractOnce(
        bytes, path: path, capture: capture, form: form, limits: limits, chunkSize: chunkSize, splits: splits)
    // Every extraction of the tests is also a differential test of the fast lane (`ItemScanner`) against the
    // slow path alone: the same elements, summary and error (its excerpt may show more of the bytes that had
    // arrived: the lane hands the slow path what it held in one piece).
    let slow = try extractOnce(
        bytes, path: path, capture: capture, form: form, limits: limits, chunkSize: chunkSize, splits: splits,
        fastLane: false)
    #expect(result.lines == slow.lines, "the fast lane changed the elements")
    #expect(result.raw == slow.raw, "the fast lane changed the elements' bytes (events)")
    #expect(result.summary == slow.summary, "the fast lane changed the summary")
    if withoutExcerpt(result.error) != withoutExcerpt(slow.error) {
        // The lane hands the slow path what it held in one piece, as if those bytes had come whole; where the
        // slow path still places an error differently by chunking (a known gap), it must agree with one piece.
        let whole = try extractOnce(
            bytes, path: path, capture: capture, form: form, limits: limits, chunkSize: nil, splits: nil,
            fastLane: false)
        #expect(withoutExcerpt(result.error) == withoutExcerpt(whole.error), "the fast lane changed the error")
    }
    return result
}

private func withoutExcerpt(_ error: JSONError?) -> String? {
    guard var error else { return nil }
    error.excerpt = nil
    return "\(error.code): \(error.description)"
}

private func extractOnce(
    _ bytes: [UInt8], path: JSONKeyPath, capture: [JSONKeyPath], form: JSONExtractor.Form, limits: JSONLimits,
    chunkSize: Int?, splits: [Int]?, fastLane: Bool = true
) throws -> Extraction {
    let extractor = try JSONExtractor(
        path: path, capture: capture, form: form, limits: limits, wholeValue: false, fastLane: fastLane)
    var result = Extraction()
    let collect: (JSONElement) -> Void = {
        result.lines.append(String(decoding: $0.json, as: UTF8.self))
        result.raw.append(Array($0.bytes))
    }
    var cuts: [Int]
    if let splits {
        cuts = splits
    } else if let chunkSize {
        cuts = Array(stride(from: chunkSize, to: bytes.count, by: chunkSize))
    } else {
        cuts = []
    }
    cuts.append(bytes.count)
    do {
        var start = 0
        for cut in cuts where cut >= start {
            try extractor.feed(bytes[start..<cut], onElement: collect)
            start = cut
        }
        result.summary = try extractor.finish(onElement: collect)
    } catch let error as JSONError {
        result.error = error
    }
    if form == .json && fastLane {
        try expectSameLines(bytes, result, path: path, capture: capture, limits: limits, cuts: cuts)
    }
    return result
}

/// `feed(_:appendingLinesTo:)` writes exactly the elements `feed(_:onElement:)` hands out, one per
/// line, and fails the same way: every extraction of the tests checks the line path too.
private func expectSameLines(
    _ bytes: [UInt8], _ expected: Extraction, path: JSONKeyPath, capture: [JSONKeyPath], limits: JSONLimits,
    cuts: [Int]
) throws {
    let extractor = try JSONExtractor(path: path, capture: capture, form: .json, limits: limits)
    var lines: [UInt8] = []
    var summary: JSONExtractor.Summary?
    var failure: JSONError?
    do {
        var start = 0
        for cut in cuts where cut >= start {
            try extractor.feed(bytes[start..<cut], appendingLinesTo: &lines)
            start = cut
        }
        summary = try extractor.finish(appendingLinesTo: &lines)
    } catch let error as JSONError {
        failure = error
    }
    let wanted = expected.lines.map { $0 + "\n" }.joined()
    #expect(String(decoding: lines, as: UTF8.self) == wanted)
    #expect(summary == expected.summary)
    #expect(failure?.description == expected.error?.description)
}

func extract(
    _ document: String, path: JSONKeyPath = .root, capture: [JSONKeyPath] = [], form: JSONExtractor.Form = .json,
    limits: JSONLimits = .init(), chunkSize: Int? = nil
) throws -> Extraction {
    try extract(Array(document.utf8), path: path, capture: capture, form: form, limits: limits, chunkSize: chunkSize)
}

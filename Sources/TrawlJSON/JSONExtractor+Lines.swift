/// Elements written straight out as JSON Lines: the fast path for `trawl extract` and `trawl fetch`.
extension JSONExtractor {
    /// Parses the next bytes of the document and appends each element they complete to `lines`,
    /// as compact JSON followed by a line feed: the bytes `JSONElement.json` gives, without making
    /// an element for each (one copy per call, however many elements it completes).
    ///
    /// ```swift
    /// let extractor = try JSONExtractor(path: "items")
    /// var lines: [UInt8] = []
    /// for try await chunk in response.body {
    ///     try extractor.feed(chunk, appendingLinesTo: &lines)
    ///     if lines.count >= 1 << 16 { try sink.write(lines); lines.removeAll(keepingCapacity: true) }
    /// }
    /// let summary = try extractor.finish(appendingLinesTo: &lines)   // summary.elementCount lines in all
    /// ```
    ///
    /// The extractor's form must be `.json`. Errors are those of `feed(_:onElement:)`; the lines of
    /// the elements completed before an error have been appended when it is thrown.
    public func feed<Bytes: Sequence<UInt8>>(_ bytes: Bytes, appendingLinesTo lines: inout [UInt8]) throws {
        precondition(form == .json, "JSONExtractor.feed(_:appendingLinesTo:) needs the .json form")
        try withUnsafeMutablePointer(to: &lines) { sink in
            lineSink = sink
            defer { lineSink = nil }
            try feed(bytes)
        }
    }

    /// Ends the document like `finish(onElement:)`, appending the last elements to `lines`.
    public func finish(appendingLinesTo lines: inout [UInt8]) throws -> Summary {
        precondition(form == .json, "JSONExtractor.finish(appendingLinesTo:) needs the .json form")
        return try withUnsafeMutablePointer(to: &lines) { sink in
            lineSink = sink
            defer { lineSink = nil }
            return try finish()
        }
    }
}

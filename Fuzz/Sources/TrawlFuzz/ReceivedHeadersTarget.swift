@testable import TrawlEngine

/// The received-header store (`HeaderLines`, frozen into `ReceivedHeaders` and read through `HTTPHeaders`) on
/// any header bytes, fed line by line as the transfer's header callback feeds it (CR/LF stripped, a line
/// starting with a space or tab folded into the previous value, an empty line skipped), agrees with a plain
/// model: fields are split at the first colon and trimmed of spaces and tabs, a line without a colon is
/// ignored, a name lookup is ASCII case-insensitive and combines repeated fields, `Content-Length` is the first
/// plain decimal value (63 bits) and `Location` is noticed.
enum ReceivedHeadersTarget {
    struct Field {
        var name: [UInt8]
        var value: [UInt8]
    }

    static func run(_ input: [UInt8]) {
        var lines = HeaderLines()
        var model: [Field] = []
        var contentLength: Int?
        var hasLocation = false
        for rawLine in input.split(separator: 10, omittingEmptySubsequences: false) {
            var line = Array(rawLine)
            while let last = line.last, last == 13 || last == 10 { line.removeLast() }
            guard let first = line.first else { continue }
            if first == 32 || first == 9 {
                line.withUnsafeBytes { lines.appendContinuation($0) }
                if !model.isEmpty {
                    model[model.count - 1].value += [32] + trimmed(line[...])
                }
                continue
            }
            line.withUnsafeBytes { lines.append($0) }
            guard let colon = line.firstIndex(of: 58) else { continue }
            let field = Field(name: trimmed(line[..<colon]), value: trimmed(line[(colon + 1)...]))
            model.append(field)
            if contentLength == nil, lowercased(field.name) == Array("content-length".utf8) {
                contentLength = decimal(field.value)
            }
            // An empty Location is not a redirect target (the engine reports it as an error when it would follow).
            if lowercased(field.name) == Array("location".utf8), !field.value.isEmpty { hasLocation = true }
        }
        require(lines.count == model.count, "\(lines.count) fields stored, the model has \(model.count)")
        require(lines.contentLength == contentLength, "Content-Length \(String(describing: lines.contentLength))")
        require(lines.hasLocation == hasLocation, "hasLocation \(lines.hasLocation)")
        let received = ReceivedHeaders(lines)
        let headers = HTTPHeaders(received: received)
        require(received.count == model.count && headers.count == model.count, "frozen count differs")
        for (index, field) in model.enumerated() {
            require(received.name(at: index) == String(decoding: field.name, as: UTF8.self), "name \(index)")
            require(received.value(at: index) == String(decoding: field.value, as: UTF8.self), "value \(index)")
        }
        var queries = ["content-length", "LOCATION", "Link", "x-{", "@", ""]
        for field in model.prefix(8) {
            if let name = String(validating: field.name, as: UTF8.self) { queries.append(name) }
        }
        for query in queries {
            let key = lowercased(Array(query.utf8))
            let expected = model.indices.filter { lowercased(model[$0].name) == key }
            require(received.indices(of: query) == expected, "indices(of: \(query.debugDescription))")
            require(received.firstIndex(of: query) == expected.first, "firstIndex(of: \(query.debugDescription))")
            let values = expected.map { String(decoding: model[$0].value, as: UTF8.self) }
            require(headers.values(for: query) == values, "values(for: \(query.debugDescription))")
            // The field value: repeated lines combined with ", " (RFC 9110 §5.3), Set-Cookie's first line alone.
            let combined = key == Array("set-cookie".utf8) ? values.first : values.first.map { _ in
                values.joined(separator: ", ")
            }
            require(headers[query] == combined, "subscript \(query.debugDescription)")
        }
    }

    static func trimmed(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        var slice = bytes
        while let first = slice.first, first == 32 || first == 9 { slice.removeFirst() }
        while let last = slice.last, last == 32 || last == 9 { slice.removeLast() }
        return Array(slice)
    }

    static func lowercased(_ bytes: [UInt8]) -> [UInt8] {
        bytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
    }

    static func decimal(_ bytes: [UInt8]) -> Int? {
        // Up to 19 digits that fit 63 bits, as the engine reads it (issue 22: a length past 63 bits is refused).
        guard !bytes.isEmpty, bytes.count <= 19, bytes.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        var value = 0
        for byte in bytes {
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int(byte - 48))
            guard !overflow1, !overflow2 else { return nil }
            value = sum
        }
        return value
    }
}

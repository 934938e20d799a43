/// Turning parser outcomes and scanner findings into `JSONError`s that say what and where.
extension JSONExtractor {
    /// Throws the error `outcome` stands for. `unit` is the buffer yajl was given (nil for the
    /// final call); its first byte is at offset `parsed` in the document.
    func check(_ outcome: ParseOutcome, unit: UnsafeRawBufferPointer?) throws {
        switch outcome {
        case .ok:
            return
        case .stopped(let offset):
            let at = Swift.max(0, unit == nil ? parsed : parsed + offset)
            switch state.pointee.failure {
            case .tooDeep:
                throw makeError(.tooDeep, "nesting deeper than \(limits.maxDepth)", at: at, unit: unit)
            case .elementTooLarge:
                throw makeError(
                    .tooLarge,
                    "element \(state.pointee.elementCount) is larger than the "
                        + "\(Self.size(limits.maxElementBytes)) limit",
                    at: at, unit: unit)
            case .captureTooLarge:
                throw makeError(
                    .tooLarge, "a captured field is larger than the \(Self.size(limits.maxCaptureBytes)) limit",
                    at: at, unit: unit)
            case .duplicateCollection:
                throw makeError(
                    .duplicateKey,
                    "the value at \(path) appears twice (a duplicated key); its elements up to here were delivered",
                    at: at, unit: unit)
            case .tokenTooLarge(let startInInput):
                let overrun = tokenOverrunOffset(startInInput: startInInput, unit: unit)
                throw makeError(.tooLarge, tokenLimitMessage, at: overrun, unit: unit)
            case nil:
                throw makeError(.tooLarge, tokenLimitMessage, at: at, unit: unit)
            }
        case let .syntax(message, offset, afterToken, steppedBack):
            if unit == nil && message == "premature EOF" {
                if !sawContent { throw makeError(.empty, "empty document: no JSON value", at: 0, unit: nil) }
                throw makeError(.truncated, "response ended early (truncated at byte \(parsed))", at: parsed, unit: nil)
            }
            if let first = head.first(where: { !Self.isWhitespace($0) }), first == UInt8(ascii: "<") {
                let at = head.firstIndex(of: first) ?? 0
                throw makeError(
                    .html, "body is HTML, not JSON (the server returned an error page?)", at: at, unit: unit)
            }
            let stepped = steppedBack ? unit.flatMap { tokenSteppedBack(to: offset, unit: $0) } : nil
            let end = unit == nil ? parsed : stepped?.end ?? parsed + offset
            if let overrun = bareOverrun(endingAt: end, unit: unit) { throw overrun }
            let at: Int
            if let stepped {
                at = stepped.start
            } else if unit == nil {
                at = tokenStart(endingAt: parsed, unit: nil)
            } else if afterToken, let unit {
                at = tokenStart(endingExactlyAt: parsed + offset, unit: unit)
                    ?? tokenStart(endingAt: parsed + offset, unit: unit)
            } else {
                at = parsed + offset
            }
            if message == "trailing garbage" {
                let byte = self.byte(at: at, unit: unit)
                if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") {
                    throw makeError(
                        .trailingData, "a second JSON document follows the first (JSON Lines is not JSON)",
                        at: at, unit: unit)
                }
                throw makeError(.trailingData, "unexpected data after the end of the JSON document", at: at, unit: unit)
            }
            throw makeError(.syntax, "invalid JSON: \(message)", at: at, unit: unit)
        }
    }

    /// `following` holds the bytes from the first one not given to yajl, for the excerpt.
    func scannerError(
        _ failure: InputScanner.Failure, at offset: Int, following: UnsafeRawBufferPointer
    ) -> JSONError {
        switch failure {
        case .invalidUTF8(let detail):
            return makeError(.invalidUTF8, "invalid UTF-8: \(detail)", at: offset, unit: nil, following: following)
        case .controlCharacter(let byte):
            return makeError(
                .syntax, "invalid JSON: control character 0x\(InputScanner.hex(byte))",
                at: offset, unit: nil, following: following)
        case .stringTooLarge:
            return makeError(.tooLarge, tokenLimitMessage, at: offset, unit: nil, following: following)
        case .loneSurrogate(let value):
            let text = String(value, radix: 16, uppercase: true)
            return makeError(
                .invalidUTF8, "invalid UTF-8: \\u\(text) escape is half a surrogate pair", at: offset,
                unit: nil, following: following)
        }
    }

    /// An error at absolute `offset`, located with the bytes still in memory: the last ones given
    /// to yajl and, when given, the buffer being parsed.
    func makeError(
        _ code: JSONError.Code, _ message: String, at offset: Int, unit: UnsafeRawBufferPointer?,
        following: UnsafeRawBufferPointer? = nil
    ) -> JSONError {
        var window = recent + (unit.map { Array($0) } ?? []) + (following.map { Array($0.prefix(16)) } ?? [])
        var windowStart = parsed - recent.count
        if window.isEmpty {
            window = head
            windowStart = 0
        }
        var line: Int?
        var column: Int?
        var excerpt: String?
        let local = offset - windowStart
        if local >= 0 && local <= window.count {
            let newlinesBefore = window[..<local].reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
            let newlinesInRecent = recent.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
            line = parsedNewlines - newlinesInRecent + newlinesBefore + 1
            if let lastNewline = window[..<local].lastIndex(of: 0x0A) {
                column = local - lastNewline
            } else if let known = parsedLastNewline, known < windowStart {
                column = offset - known
            } else if parsedLastNewline == nil || windowStart == 0 {
                column = offset + 1
            }
            if column == nil { line = nil }
        }
        if local < 0, offset >= 0, (parsedLastNewline ?? -1) < offset {
            // Before the bytes in memory, inside a token held from earlier ones: tokens hold no line feed.
            line = parsedNewlines + 1
            column = offset - (parsedLastNewline ?? -1)
        }
        if local >= 0 && local <= window.count && !window.isEmpty {
            let before = window[Swift.max(0, local - 24)..<local]
            let after = window[local..<Swift.min(window.count, local + 16)]
            excerpt = Self.render(before) + ">>" + Self.render(after)
        }
        return JSONError(
            code: code, message: message, byteOffset: offset, line: line, column: column,
            keyPath: state.pointee.currentPath(), excerpt: excerpt)
    }

    /// The start of the token that ends just before `end`, found by reading back: yajl reports
    /// where it stopped, which is after the token, and it may have begun in an earlier buffer.
    private func tokenStart(endingAt end: Int, unit: UnsafeRawBufferPointer?) -> Int {
        var position = end - 1
        guard let last = byte(at: position, unit: unit) else { return Swift.max(0, position) }
        if last == UInt8(ascii: "\"") {
            position -= 1
            while let byte = byte(at: position, unit: unit) {
                if byte == UInt8(ascii: "\"") && !isEscaped(position, unit: unit) { return position }
                position -= 1
            }
            return position + 1
        }
        while let byte = byte(at: position - 1, unit: unit), Self.isBareTokenByte(byte), Self.isBareTokenByte(last) {
            position -= 1
        }
        return Swift.max(0, position)
    }

    private func isEscaped(_ position: Int, unit: UnsafeRawBufferPointer?) -> Bool {
        var backslashes = 0
        while byte(at: position - 1 - backslashes, unit: unit) == UInt8(ascii: "\\") { backslashes += 1 }
        return backslashes % 2 == 1
    }

    private static func isBareTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "."), UInt8(ascii: "+"), UInt8(ascii: "-"):
            return true
        default:
            return byte >= 0x80
        }
    }

    private func byte(at offset: Int, unit: UnsafeRawBufferPointer?) -> UInt8? {
        if let unit, offset >= parsed, offset - parsed < unit.count { return unit[offset - parsed] }
        let local = offset - (parsed - recent.count)
        return recent.indices.contains(local) ? recent[local] : nil
    }

    /// Printable text: control characters and bytes that are not UTF-8 as escapes.
    private static func render(_ bytes: ArraySlice<UInt8>) -> String {
        var text = ""
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var position = bytes.startIndex
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                let scalar = Unicode.UTF8.decode(encoded)
                switch scalar.value {
                case 0x0A: text += "\\n"
                case 0x0D: text += "\\r"
                case 0x09: text += "\\t"
                case 0..<0x20, 0x7F: text += "\\x" + InputScanner.hex(UInt8(scalar.value))
                case 0xFEFF: text += "\\u{FEFF}"
                default: text.unicodeScalars.append(scalar)
                }
                position += encoded.count
            case .error(let length):
                for byte in bytes[position..<(position + length)] { text += "\\x" + InputScanner.hex(byte) }
                position += length
            case .emptyInput:
                return text
            }
        }
    }
}

import NIOCore

/// `GET /download/N`: `N` bytes of ``DownloadContent`` with validators and single byte ranges, plus
/// the misbehaviours a resuming downloader must survive.
///
/// Query parameters:
/// - `seed=S` (default 0): the content, `ETag: "S-N"` and `Last-Modified` (a fixed date per seed).
/// - `mode=ignore-range`: always 200 with the full body and no `Accept-Ranges`.
/// - `mode=changing`: the resource changes with every request to the path: the effective seed is
///   `S + k` for the `k`-th request (from 0), counted per server by path, so an `If-Range` from an
///   earlier response never matches and the bytes differ.
/// - `mode=wrong-range`: a satisfiable range is answered 206 with the body and `Content-Range` of
///   a different range of the same length: starting at 0 (or at 1 when the request started at 0).
/// - `mode=ignore-if-range`: the resource changes with every request as with `changing`, but `Range`
///   is honoured whatever `If-Range` says: a stale partial download gets a 206 of the *new* bytes
///   (a broken cache or server), which only the validators in the 206 reveal.
/// - `etag=weak`: `ETag: W/"S-N"` (never matches `If-Range`, per RFC 9110); `etag=none`: no `ETag`,
///   so `Last-Modified` is the only validator. Default `strong`.
/// - `cut=K`: the head announces the full length, but only `K` body bytes are sent, then a TCP RST.
/// - `hold=K`: the head announces the full length, `K` body bytes are sent, then nothing more: the
///   connection stays open and silent (a download to kill or time out at a known length).
/// - `delay_ms=D`, `rate=B`: a pause of `D` ms before each write, and/or pacing at about `B` bytes/s.
/// - `chunk=C` (default 64 KiB): bytes per write.
/// - `filename=F`: `Content-Disposition: attachment; filename="F"` (F as given, quoted-string escaped;
///   `filename*=UTF-8''…` added when F is not ASCII).
///
/// ```swift
/// // GET /download/1000?seed=2  with  Range: bytes=100-199
/// // -> 206, Content-Range: bytes 100-199/1000, body DownloadContent.bytes(100..<200, seed: 2)
/// ```
enum DownloadEndpoint {
    /// A byte range request as parsed from `Range`.
    enum RangeRequest: Equatable {
        /// `bytes=A-` or `bytes=A-B` (`last` nil for an open end).
        case from(Int, last: Int?)
        /// `bytes=-S`: the last `S` bytes.
        case suffix(Int)
    }

    static func response(_ text: Substring, request: InboundRequest, book: RequestBook) -> Response {
        guard let total = Int(text), total >= 0 else {
            return .error(400, "byte count must be a non-negative integer")
        }
        let target = request.target
        guard target.value("seed") == nil || target.int("seed") != nil else {
            return .error(400, "seed must be an integer")
        }
        let mode = target.value("mode") ?? ""
        guard ["", "ignore-range", "changing", "wrong-range", "ignore-if-range"].contains(mode) else {
            return .error(
                400, "mode must be ignore-range, changing, wrong-range or ignore-if-range",
                [("mode", JSONText.string(mode))])
        }
        let etagKind = target.value("etag") ?? "strong"
        guard ["strong", "weak", "none"].contains(etagKind) else {
            return .error(400, "etag must be strong, weak or none", [("etag", JSONText.string(etagKind))])
        }
        var seed = target.int("seed") ?? 0
        if mode == "changing" || mode == "ignore-if-range" {
            seed &+= book.nextAttempt(for: "download changing " + target.path) - 1
        }
        let etag = "\"\(seed)-\(total)\""
        let lastModified = CivilTime.imfFixdate(
            epochSeconds: 1_600_000_000 + (((seed % 1_000_000) + 1_000_000) % 1_000_000) * 3600
        )

        var headers: [(String, String)] = [("Content-Type", "application/octet-stream")]
        if mode != "ignore-range" {
            headers.append(("Accept-Ranges", "bytes"))
        }
        var validators = [("Last-Modified", lastModified)]
        if etagKind == "strong" { validators.insert(("ETag", etag), at: 0) }
        if etagKind == "weak" { validators.insert(("ETag", "W/" + etag), at: 0) }
        headers += validators
        if let filename = target.value("filename") {
            guard !filename.contains(where: { $0 == "\r" || $0 == "\n" }) else {
                return .error(400, "filename must not contain CR or LF")
            }
            headers.append(("Content-Disposition", contentDisposition(filename)))
        }

        var status = 200
        var range = 0..<total
        let rangeHeader = request.head.headers["Range"]
        let ifRange = request.head.headers["If-Range"].first
        // If-Range uses the strong comparison: only a strong ETag, or the date, can match.
        let ifRangeMatches = ifRange == nil || (ifRange == etag && etagKind == "strong") || ifRange == lastModified
        if mode != "ignore-range", rangeHeader.count == 1, let requested = parseRange(rangeHeader[0]),
            ifRangeMatches || mode == "ignore-if-range"
        {
            guard let satisfiable = resolve(requested, total: total) else {
                return Response(
                    status: 416,
                    headers: [("Content-Range", "bytes */\(total)")] + validators + [("Content-Length", "0")],
                    body: .empty
                )
            }
            range = satisfiable
            if mode == "wrong-range" {
                let start = range.lowerBound > 0 ? 0 : min(1, total - range.count)
                range = start..<(start + range.count)
            }
            status = 206
            headers.append(("Content-Range", "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(total)"))
        }
        headers.append(("Content-Length", String(range.count)))

        var chunkSize = max(1, target.int("chunk") ?? Router.defaultChunkSize)
        var pauseNanoseconds: Int64 = 0
        if let milliseconds = target.int("delay_ms"), milliseconds > 0 {
            pauseNanoseconds += Int64(milliseconds) * 1_000_000
        }
        if let rate = target.int("rate"), rate > 0 {
            chunkSize = min(chunkSize, max(1, rate / 20))
            pauseNanoseconds += Int64(chunkSize) * 1_000_000_000 / Int64(rate)
        }
        var ending = ResponseEnding.keepAlive
        var isFault = false
        if let cut = target.int("cut"), cut >= 0, cut < range.count {
            range = range.lowerBound..<(range.lowerBound + cut)
            ending = .reset
            isFault = true
        } else if let hold = target.int("hold"), hold >= 0, hold < range.count {
            range = range.lowerBound..<(range.lowerBound + hold)
            ending = .hold
            isFault = true
        }
        let source = DownloadSource(
            range: range,
            seed: seed,
            chunkSize: chunkSize,
            pause: pauseNanoseconds > 0 ? .nanoseconds(pauseNanoseconds) : nil
        )
        return Response(status: status, headers: headers, body: .stream(source), ending: ending, isFault: isFault)
    }

    /// Parses a single-range `bytes=` value; `nil` for anything else (other units, several ranges,
    /// bad syntax), which the server then ignores as RFC 9110 allows.
    static func parseRange(_ value: String) -> RangeRequest? {
        let trimmed = value.trimmingSpaces()
        guard trimmed.lowercased().hasPrefix("bytes=") else { return nil }
        let spec = trimmed.dropFirst(6).trimmingSpaces()
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return nil }
        let first = spec[..<dash].trimmingSpaces()
        let last = spec[spec.index(after: dash)...].trimmingSpaces()
        let isDigits = { (text: String) in !text.isEmpty && text.allSatisfy { $0.isASCII && $0.isNumber } }
        if first.isEmpty {
            guard isDigits(last), let length = Int(last) else { return nil }
            return .suffix(length)
        }
        guard isDigits(first), let start = Int(first) else { return nil }
        if last.isEmpty { return .from(start, last: nil) }
        guard isDigits(last), let end = Int(last), end >= start else { return nil }
        return .from(start, last: end)
    }

    /// The bytes a range selects of a `total`-byte body; `nil` when unsatisfiable.
    static func resolve(_ request: RangeRequest, total: Int) -> Range<Int>? {
        switch request {
        case .from(let start, let last):
            guard start < total else { return nil }
            return start..<(min(last ?? (total - 1), total - 1) + 1)
        case .suffix(let length):
            guard length > 0, total > 0 else { return nil }
            return max(0, total - length)..<total
        }
    }

    /// `attachment; filename="…"` with `"` and `\` escaped, plus `filename*` for non-ASCII names.
    static func contentDisposition(_ filename: String) -> String {
        var quoted = ""
        for character in filename {
            if character == "\"" || character == "\\" { quoted.append("\\") }
            quoted.append(character)
        }
        var value = "attachment; filename=\"" + quoted + "\""
        if !filename.unicodeScalars.allSatisfy(\.isASCII) {
            let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#$&+-.^_`|~".utf8)
            var encoded = ""
            for byte in filename.utf8 {
                if unreserved.contains(byte) {
                    encoded.unicodeScalars.append(Unicode.Scalar(byte))
                } else {
                    let hex = String(byte, radix: 16, uppercase: true)
                    encoded += "%" + (hex.count == 1 ? "0" : "") + hex
                }
            }
            value += "; filename*=UTF-8''" + encoded
        }
        return value
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs.
    func trimmingSpaces() -> String {
        let isSpace = { (character: Character) in character == " " || character == "\t" }
        guard let first = self.firstIndex(where: { !isSpace($0) }), let last = self.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(self[first...last])
    }
}

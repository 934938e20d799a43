internal import CCurl

/// What a finished hop produced: the head, the buffered body (empty when streamed), and where a
/// redirect points when the hop ended in one Trawl follows.
struct TransferOutcome: Sendable {
    var head: ResponseHead
    var body: [UInt8]
    var redirectURL: String?
}

/// One request in flight: the context libcurl's callbacks reach through their user-data pointer.
/// Everything but the continuation hand-off is touched only on the loop thread. What the transfer is at (its head,
/// whether its waiter was resumed, its pauses, a cancel before start) is `state`, a `TransferState`; this class
/// does what its events return.
final class Transfer: @unchecked Sendable {
    enum Delivery {
        /// Collect the body (within `request.maxBodySize`) and resume when the transfer ends.
        case buffered
        /// Resume as soon as the final head arrives; the body flows through the stream.
        case streaming(BodyStream)
    }

    let request: PreparedRequest
    let delivery: Delivery
    private var continuation: UnsafeContinuation<TransferOutcome, any Error>?

    // Loop-thread state.
    var easy: EasyHandle?
    /// Position in the loop's list of running transfers.
    var liveIndex: Int?
    var headerList: UnsafeMutablePointer<curl_slist>?
    var upload: UploadReader?
    var state: TransferState
    /// Header, body and upload bytes moved so far, and the window the stall check measures against.
    private(set) var bytesMoved = 0
    var stallWindowStart: ContinuousClock.Instant?
    var stallWindowBytes = 0
    private var status = 0
    private var statusLine: String?
    private var headerSize = 0
    private var headerLines = HeaderLines()
    /// `headerLines` frozen for readers; rebuilt if a line arrives after it was taken.
    private var frozenHeaders: ReceivedHeaders?
    private var headers: HTTPHeaders {
        if let frozenHeaders { return HTTPHeaders(received: frozenHeaders) }
        let frozen = ReceivedHeaders(headerLines)
        frozenHeaders = frozen
        return HTTPHeaders(received: frozen)
    }
    private var body: [UInt8] = []
    private var excerpt: [UInt8] = []
    private var received = 0
    /// Why a callback stopped the transfer (too large, consumer gone, body source failed).
    private var abortError: TrawlError?
    private var lastProgress = (Int64(-1), Int64(-1), Int64(-1), Int64(-1))
    /// The body's decoder when it has a Content-Encoding Trawl asked for.
    private var decoding: DecodedBody?

    init(request: PreparedRequest, delivery: Delivery) {
        self.request = request
        self.delivery = delivery
        if case .streaming = delivery { state = TransferState(streaming: true) } else {
            state = TransferState(streaming: false)
        }
    }

    /// Caller thread, before submission.
    func setContinuation(_ continuation: UnsafeContinuation<TransferOutcome, any Error>) {
        self.continuation = continuation
    }

    private func resume(_ result: Result<TransferOutcome, TrawlError>) {
        guard let continuation else { return }
        self.continuation = nil
        continuation.resume(with: result.mapError { $0 as any Error })
    }

    // MARK: - callbacks (loop thread)

    /// Returns false to abort the transfer (`abortError` says why).
    func receiveHeaderLine(_ line: UnsafeRawBufferPointer) -> Bool {
        bytesMoved &+= line.count
        // "HTTP/" in any case, as libcurl reads it (a server answering "http/1.1 200 OK" is answered by curl too).
        if line.count >= 5, line[0] | 0x20 == 104, line[1] | 0x20 == 116, line[2] | 0x20 == 116,
            line[3] | 0x20 == 112, line[4] == 47
        {
            // A new head: the first, or the next after a 1xx.
            status = Self.parseStatus(line)
            var end = min(line.count, 1024)
            while end > 0, line[end - 1] == 13 || line[end - 1] == 10 { end -= 1 }
            statusLine = String(decoding: UnsafeRawBufferPointer(rebasing: line[..<end]), as: UTF8.self)
            headerSize = line.count
            if headerLines.count > 0 { headerLines = HeaderLines() }  // the head after a 1xx
            frozenHeaders = nil
            state.statusLine()
            return true
        }
        guard state.readsHeaderLines else { return true }  // trailers
        headerSize &+= line.count
        var end = line.count
        while end > 0, line[end - 1] == 13 || line[end - 1] == 10 { end -= 1 }
        if end == 0 {
            if status == 407, let proxy = request.proxyInUse {
                // Plain http through a forward proxy: the 407 is the proxy's, not the server's (which was never asked).
                let message = "the proxy \(proxy) refused the request (407 Proxy Authentication Required)"
                abortError = request.proxySetting == nil
                    ? makeError(
                        code: .connectFailed, message, hint: "the proxy wants credentials: put them in the proxy variable's URL")
                    : makeError(code: .connectFailed, message, remedy: .proxyCredentials)
                return false
            }
            let follows = request.followsRedirects
            if let problem = HeadCheck.problem(status: status, headers: headerLines, followsRedirects: follows) {
                abortError = makeError(code: .receiveFailed, problem.message, hint: problem.hint)
                return false
            }
            let followed = follows && RedirectStep.isFollowable(status) && headerLines.hasLocation
            switch state.headEnded(status: status, followedRedirect: followed) {
            case .interim, .redirect:
                return true
            case .deliverHead:
                resume(.success(TransferOutcome(head: makeHead(total: false), body: [], redirectURL: nil)))
            case .body:
                if case .buffered = delivery, let length = headerLines.contentLength, length > 0,
                    length <= (request.maxBodySize ?? Int.max), length <= 64 << 20
                {
                    body.reserveCapacity(length)
                }
            }
            if request.acceptEncoding, let encoding = headerLines.contentEncoding { return startDecoding(encoding) }
            return true
        }
        frozenHeaders = nil
        let content = UnsafeRawBufferPointer(rebasing: line[..<end])
        if content[0] == 32 || content[0] == 9 {
            headerLines.appendContinuation(content)  // obs-fold
        } else {
            headerLines.append(content)
        }
        return true
    }

    /// Sets up the decoder for a `Content-Encoding`; false (and `abortError`) for one Trawl did not ask for.
    private func startDecoding(_ value: String) -> Bool {
        switch ContentDecoder.encoding(for: value) {
        case .success(nil):
            return true
        case .success(let encoding?):
            guard let decoder = ContentDecoder(encoding) else {
                abortError = makeError(code: .transport, "zlib could not start (out of memory?)")
                return false
            }
            decoding = DecodedBody(decoder: decoder, maxRatio: request.maxDecompressionRatio)
            return true
        case .failure(let unsupported):
            abortError = makeError(
                code: .decodingFailed, "the body's Content-Encoding '\(unsupported.value)' was not asked for",
                hint: "Trawl asks for and decodes gzip and deflate; set Accept-Encoding yourself to get raw bytes")
            return false
        }
    }

    /// Returns the byte count consumed, 0 to abort, or CURL_WRITEFUNC_PAUSE.
    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        if state.dropsBody { return bytes.count }
        guard let decoding else { return deliver(bytes) }
        let outcome = decoding.receive(bytes) { decoded in
            switch deliver(decoded) {
            case 0: .aborted
            case Int(TRAWL_CURL_WRITEFUNC_PAUSE): .paused
            default: .accepted
            }
        }
        switch outcome {
        case .consumed(let count):
            bytesMoved &+= count
            return count
        case .pause:
            return Int(TRAWL_CURL_WRITEFUNC_PAUSE)
        case .abort:
            return 0
        case .failed(let code, let message, let hint, let remedy):
            abortError = makeError(code: code, message, hint: hint, remedy: remedy)
            return 0
        }
    }

    /// Hands decoded bytes to the buffer or the stream: the byte count, 0 to abort, or CURL_WRITEFUNC_PAUSE.
    private func deliver(_ bytes: UnsafeRawBufferPointer) -> Int {
        if let limit = request.maxBodySize, received + bytes.count > limit {
            abortError = makeError(
                code: .tooLarge, "the body exceeded the limit of \(limit) bytes (decoded)",
                remedy: .bodyLimit)
            return 0
        }
        switch delivery {
        case .buffered:
            body.append(copying: bytes)  // the excerpt is the body's start
        case .streaming(let stream):
            if excerpt.count < 512 {
                excerpt.append(copying: UnsafeRawBufferPointer(rebasing: bytes.prefix(512 - excerpt.count)))
            }
            switch stream.offer(bytes) {
            case .accepted: break
            case .pause:
                state.pauseReceive()
                return Int(TRAWL_CURL_WRITEFUNC_PAUSE)
            case .abandoned:
                abortError = makeError(code: .cancelled, "the body stream was dropped before it ended")
                return 0
            }
        }
        received += bytes.count
        if decoding == nil { bytesMoved &+= bytes.count }  // network bytes: a decoded body counts its input
        return bytes.count
    }

    /// Returns bytes written, 0 at the end, CURL_READFUNC_PAUSE or CURL_READFUNC_ABORT.
    func sendBody(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let upload else { return 0 }
        switch upload.read(into: buffer) {
        case .bytes(let count):
            bytesMoved &+= count
            return count
        case .wouldBlock:
            state.pauseSend()
            return Int(TRAWL_CURL_READFUNC_PAUSE)
        case .failed(let message, let underlying):
            abortError = makeError(code: .bodySourceFailed, message, underlying: underlying)
            return Int(TRAWL_CURL_READFUNC_ABORT)
        }
    }

    func reportProgress(received: Int64, expectedToReceive: Int64, sent: Int64, expectedToSend: Int64) {
        guard let onProgress = request.onProgress else { return }
        let now = (received, expectedToReceive, sent, expectedToSend)
        guard now != lastProgress else { return }
        lastProgress = now
        onProgress(TransferProgress(
            received: received, expectedToReceive: expectedToReceive > 0 ? expectedToReceive : nil,
            sent: sent, expectedToSend: upload?.length ?? (expectedToSend > 0 ? expectedToSend : nil)))
    }

    // MARK: - completion (loop thread)

    /// Ends the transfer with libcurl's result (or a cancellation), resuming whoever waits.
    /// Called exactly once per submitted transfer.
    func complete(code: CURLcode, cancellation: TrawlError?) {
        let failure: TrawlError?
        if let cancellation {
            failure = cancellation
        } else if code == CURLE_OK, let decoding, decoding.endedEarly {
            failure = makeError(
                code: .truncated,
                "the compressed body (\(decoding.decoder.encoding)) ended before its end marker after "
                    + "\(decoding.decoder.compressedBytes) bytes (\(received) decoded)",
                hint: "the server or a proxy cut the body short; retry the request")
        } else if code == CURLE_OK {
            // libcurl 7.88 ends a response whose connection closed inside the head with CURLE_OK and no body.
            failure = state.headComplete ? nil : makeError(
                code: .truncated, "the connection closed before the response head ended",
                hint: "the server or a proxy cut the response short; retry the request")
        } else {
            failure = CurlErrors.error(for: code, transfer: self, abortError: abortError)
        }
        let ending = state.ended(failed: failure != nil)
        guard ending != .none else { return }
        let redirectURL = state.isRedirect && failure == nil ? easy?.string(CURLINFO_REDIRECT_URL) : nil
        let stream: BodyStream?
        if case .streaming(let bodyStream) = delivery { stream = bodyStream } else { stream = nil }

        if let failure {
            if ending == .fail { resume(.failure(failure)) }
            stream?.finish(failure: failure, timings: nil)
            return
        }
        let head = makeHead(total: true)
        stream?.finish(failure: nil, timings: head.timings)
        if ending == .succeed {
            resume(.success(TransferOutcome(head: head, body: body, redirectURL: redirectURL)))
        }
    }

    private func makeHead(total: Bool) -> ResponseHead {
        guard let easy else {
            return ResponseHead(status: status, headers: headers, url: request.url, httpVersion: .unknown)
        }
        var info = trawl_transfer_info()
        trawl_curl_transfer_info(easy.raw, total ? 1 : 0, &info)
        let version: HTTPVersion
        switch info.http_version {
        case CURL_HTTP_VERSION_1_0: version = .http1_0
        case CURL_HTTP_VERSION_1_1: version = .http1_1
        case CURL_HTTP_VERSION_2_0: version = .http2
        case CURL_HTTP_VERSION_3: version = .http3
        default: version = .unknown
        }
        let ip = info.ip.flatMap { $0.pointee == 0 ? nil : String(cString: $0) }
        let timings = Timings(
            dns: .microseconds(Int64(info.dns)), connect: .microseconds(Int64(info.connect)),
            tls: .microseconds(Int64(info.tls)), firstByte: .microseconds(Int64(info.first_byte)),
            total: total ? .microseconds(Int64(info.total)) : nil)
        var head = ResponseHead(status: status, headers: headers, url: request.url, httpVersion: version,
                                remoteIP: ip, remotePort: info.port, timings: timings, redirects: [])
        head.statusLine = statusLine
        head.headerSize = headerSize
        return head
    }

    func makeError(code: TrawlError.Code, _ message: String, hint: String? = nil, remedy: TrawlError.Remedy? = nil,
                   curlCode: Int? = nil, curlMessage: String? = nil,
                   underlying: (any Error & Sendable)? = nil) -> TrawlError {
        TrawlError(
            code: code, message: message, hint: hint, remedy: remedy, method: request.method.rawValue, url: request.url,
            status: status > 0 ? status : nil, headers: status > 0 ? headers : nil, bodyExcerpt: bodyExcerpt,
            curlCode: curlCode, curlMessage: curlMessage, underlying: underlying)
    }

    func stalledError() -> TrawlError {
        let timeouts = request.timeouts
        let stall = timeouts.stall.map { "\($0)" } ?? "?"
        return makeError(
            code: .stalled, "fewer than \(timeouts.stallMinimumBytesPerSecond) bytes/s moved for \(stall)",
            remedy: .stallTimeout)
    }

    /// The first 512 bytes of the body received so far.
    private var bodyExcerpt: [UInt8] {
        if case .buffered = delivery { return Array(body.prefix(512)) }
        return excerpt
    }

    /// Bytes of body received so far (for error messages).
    var receivedBytes: Int { received }

    /// Whether the final response head has ended.
    var headEnded: Bool { state.headComplete }

    private static func parseStatus(_ line: UnsafeRawBufferPointer) -> Int {
        guard let space = line.firstIndex(of: 32) else { return 0 }
        var value = 0
        var index = space + 1
        while index < line.count, index < space + 4, (48...57).contains(line[index]) {
            value = value * 10 + Int(line[index] - 48)
            index += 1
        }
        return value
    }
}

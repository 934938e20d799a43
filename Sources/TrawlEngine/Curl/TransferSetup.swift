internal import CCurl

/// Copies a prepared request into a (freshly reset) easy handle: every option Trawl sets lives here.
enum TransferSetup {
    static func configure(_ easy: EasyHandle, for transfer: Transfer, configuration: Client.Configuration) throws {
        let request = transfer.request
        let context = Unmanaged.passUnretained(transfer).toOpaque()

        easy.set(CURLOPT_URL, request.url)
        easy.set(CURLOPT_PRIVATE, pointer: context)
        // Secure defaults: only http(s), also after redirects (which Trawl follows itself), no signals.
        easy.set(CURLOPT_PROTOCOLS_STR, "http,https")
        easy.set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        easy.set(CURLOPT_FOLLOWLOCATION, false)
        easy.set(CURLOPT_NOSIGNAL, true)
        easy.set(CURLOPT_SSL_VERIFYPEER, configuration.tls.verifyPeer)
        easy.set(CURLOPT_SSL_VERIFYHOST, configuration.tls.verifyPeer ? 2 : 0)
        if let caFile = configuration.tls.caFile { easy.set(CURLOPT_CAINFO, caFile) }

        easy.set(CURLOPT_WRITEFUNCTION, dataCallback: trawlWriteCallback)
        easy.set(CURLOPT_WRITEDATA, pointer: context)
        easy.set(CURLOPT_HEADERFUNCTION, dataCallback: trawlHeaderCallback)
        easy.set(CURLOPT_HEADERDATA, pointer: context)
        if case .streaming = transfer.delivery { easy.set(CURLOPT_BUFFERSIZE, 128 << 10) }
        if request.onProgress != nil {
            easy.set(CURLOPT_NOPROGRESS, false)
            easy.set(CURLOPT_XFERINFOFUNCTION, xferinfoCallback: trawlProgressCallback)
            easy.set(CURLOPT_XFERINFODATA, pointer: context)
        }

        switch configuration.httpVersion {
        case .http1_1:
            easy.set(CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1)
        case .http2:
            easy.set(CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS)
            easy.set(CURLOPT_PIPEWAIT, true)
        }
        if request.acceptEncoding { easy.set(CURLOPT_ACCEPT_ENCODING, "") }

        let timeouts = request.timeouts
        if let connect = timeouts.connect { easy.set(CURLOPT_CONNECTTIMEOUT_MS, connect.trawlMilliseconds) }
        if let total = timeouts.total { easy.set(CURLOPT_TIMEOUT_MS, total.trawlMilliseconds) }
        if let stall = timeouts.stall {
            easy.set(CURLOPT_LOW_SPEED_LIMIT, max(1, timeouts.stallMinimumBytesPerSecond))
            easy.set(CURLOPT_LOW_SPEED_TIME, max(1, (stall.trawlMilliseconds + 999) / 1000))
        }

        try configureMethodAndBody(easy, for: transfer, context: context)

        var list: UnsafeMutablePointer<curl_slist>?
        for line in request.headerLines {
            guard let appended = curl_slist_append(list, line) else {
                if let list { curl_slist_free_all(list) }
                throw transfer.makeError(code: .transport, "out of memory while building the header list")
            }
            list = appended
        }
        transfer.headerList = list
        easy.set(CURLOPT_HTTPHEADER, slist: list)
    }

    private static func configureMethodAndBody(
        _ easy: EasyHandle, for transfer: Transfer, context: UnsafeMutableRawPointer
    ) throws {
        let request = transfer.request
        let method = request.method
        if method == .head {
            easy.set(CURLOPT_NOBODY, true)
            return
        }
        guard request.body != nil || PreparedRequest.methodSendsEmptyBody(method) else {
            if method != .get { easy.set(CURLOPT_CUSTOMREQUEST, method.rawValue) }
            return
        }
        // Every body goes through the read callback ("upload" mode) with the method named explicitly,
        // so bytes, files and streams share one path and nothing adds a default Content-Type.
        let reader = try UploadReader(
            body: request.body ?? .bytes([]), method: method.rawValue, url: request.url)
        transfer.upload = reader
        easy.set(CURLOPT_UPLOAD, true)
        easy.set(CURLOPT_CUSTOMREQUEST, method.rawValue)
        easy.set(CURLOPT_READFUNCTION, dataCallback: trawlReadCallback)
        easy.set(CURLOPT_READDATA, pointer: context)
        easy.set(CURLOPT_INFILESIZE_LARGE, offT: reader.length ?? -1)
    }
}

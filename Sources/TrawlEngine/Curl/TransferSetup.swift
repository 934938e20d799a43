internal import CCurl
import Glibc

/// Copies a prepared request into a pooled easy handle: every option Trawl sets lives here.
enum TransferSetup {
    static func configure(
        _ easy: EasyHandle, for transfer: Transfer, configuration: Client.Configuration,
        defaultHeaderList: UnsafeMutablePointer<curl_slist>?
    ) throws {
        let request = transfer.request
        let context = Unmanaged.passUnretained(transfer).toOpaque()
        easy.prepareForTransfer()
        if !easy.hasClientOptions {
            setClientOptions(easy, configuration: configuration)
            easy.hasClientOptions = true
        }

        if easy.url != request.url {
            // libcurl keeps its copy between transfers (and parses it again for each): the same URL is not set
            // again (a load generator sends a few URLs many times).
            easy.set(CURLOPT_URL, request.url)
            easy.url = request.url
        }
        easy.context.pointee = context
        // Options a pooled handle keeps between transfers are set only when they change.
        easy.set(CURLOPT_NOPROGRESS, request.onProgress == nil ? 1 : 0, unlessHeld: &easy.noProgress)
        let bufferSize: Int
        if case .streaming = transfer.delivery { bufferSize = 128 << 10 } else { bufferSize = 16 << 10 }
        easy.set(CURLOPT_BUFFERSIZE, bufferSize, unlessHeld: &easy.bufferSize)
        if easy.acceptEncoding != request.acceptEncoding {
            // Only what Trawl decodes itself (libcurl's own decoding is off: ContentDecoder says why).
            easy.set(CURLOPT_ACCEPT_ENCODING, request.acceptEncoding ? "gzip, deflate" : nil)
            easy.acceptEncoding = request.acceptEncoding
        }

        let timeouts = request.timeouts
        easy.set(CURLOPT_CONNECTTIMEOUT_MS, timeouts.connect?.trawlMilliseconds ?? 0,
                 unlessHeld: &easy.connectTimeoutMilliseconds)
        easy.set(CURLOPT_TIMEOUT_MS, timeouts.total?.trawlMilliseconds ?? 0, unlessHeld: &easy.totalTimeoutMilliseconds)
        // Stalls are detected by the loop (CurlLoop.abortStalledTransfers), not CURLOPT_LOW_SPEED_*: libcurl's
        // speed check re-arms a timer on every progress update, which showed in profiles of small requests.

        try configureMethodAndBody(easy, for: transfer)

        if request.usesClientHeaderLines, let defaultHeaderList {
            if easy.sharedHeaderList != defaultHeaderList {
                easy.set(CURLOPT_HTTPHEADER, slist: defaultHeaderList)  // shared: never freed per transfer
                easy.sharedHeaderList = defaultHeaderList
            }
            return
        }
        easy.sharedHeaderList = nil
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

    /// Whether any variable libcurl reads for a proxy is set (read once per process).
    private static let proxyInEnvironment: Bool = {
        let names = ["http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"]
        return names.contains { name in getenv(name) != nil }
    }()

    /// Options fixed for the client's lifetime, set once per handle.
    private static func setClientOptions(_ easy: EasyHandle, configuration: Client.Configuration) {
        // Secure defaults: only http(s), also after redirects (which Trawl follows itself), no signals.
        easy.set(CURLOPT_PROTOCOLS_STR, "http,https")
        easy.set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        easy.set(CURLOPT_FOLLOWLOCATION, false)
        easy.set(CURLOPT_NOSIGNAL, true)
        // Through a proxy's CONNECT tunnel the proxy's own head ("200 Connection established") would reach the
        // header callback as a first response: only the origin's head may.
        easy.set(CURLOPT_SUPPRESS_CONNECT_HEADERS, true)
        easy.set(CURLOPT_HTTP_CONTENT_DECODING, false)
        easy.set(CURLOPT_SSL_VERIFYPEER, configuration.tls.verifyPeer)
        easy.set(CURLOPT_SSL_VERIFYHOST, configuration.tls.verifyPeer ? 2 : 0)
        if let caFile = configuration.tls.caFile { easy.set(CURLOPT_CAINFO, caFile) }
        if let caPath = configuration.tls.caPath { easy.set(CURLOPT_CAPATH, caPath) }
        if let certificate = configuration.tls.clientCertificate { easy.set(CURLOPT_SSLCERT, certificate) }
        if let key = configuration.tls.clientKey { easy.set(CURLOPT_SSLKEY, key) }
        if let proxy = configuration.proxy {
            easy.set(CURLOPT_PROXY, proxy)
            easy.set(CURLOPT_NOPROXY, configuration.noProxy ?? "")
        } else if let noProxy = configuration.noProxy {
            easy.set(CURLOPT_NOPROXY, noProxy)
        } else if !proxyInEnvironment {
            // No proxy variable is set: say so once, instead of libcurl reading five or six environment
            // variables on every request (a proxy set later in the process's life is not picked up).
            easy.set(CURLOPT_PROXY, "")
            easy.set(CURLOPT_NOPROXY, "")
        }

        if let credentials = configuration.proxyCredentials { easy.set(CURLOPT_PROXYUSERPWD, credentials) }
        easy.set(CURLOPT_WRITEFUNCTION, dataCallback: trawlWriteCallback)
        easy.set(CURLOPT_HEADERFUNCTION, dataCallback: trawlHeaderCallback)
        easy.set(CURLOPT_READFUNCTION, dataCallback: trawlReadCallback)
        easy.set(CURLOPT_XFERINFOFUNCTION, xferinfoCallback: trawlProgressCallback)

        switch configuration.httpVersion {
        case .http1_1:
            easy.set(CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1)
        case .http2:
            easy.set(CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS)
            easy.set(CURLOPT_PIPEWAIT, true)
        case .http2PriorKnowledge:
            easy.set(CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE)
            easy.set(CURLOPT_FORBID_REUSE, true)
        }
    }

    /// Sets every method-related option explicitly, since the handle may come from a different kind of request.
    private static func configureMethodAndBody(_ easy: EasyHandle, for transfer: Transfer) throws {
        let request = transfer.request
        let method = request.method
        guard request.body != nil || PreparedRequest.methodSendsEmptyBody(method) else {
            guard easy.bodilessMethod != method else { return }  // the same as the handle's last request
            easy.set(CURLOPT_HTTPGET, true)  // clears upload mode
            easy.set(CURLOPT_NOBODY, method == .head)
            easy.set(CURLOPT_CUSTOMREQUEST, method == .get || method == .head ? nil : method.rawValue)
            easy.bodilessMethod = method
            return
        }
        easy.bodilessMethod = nil
        // Every body goes through the read callback ("upload" mode) with the method named explicitly,
        // so bytes, files and streams share one path and nothing adds a default Content-Type.
        let reader = try UploadReader(
            body: request.body ?? .bytes([]), method: method.rawValue, url: request.url)
        transfer.upload = reader
        easy.set(CURLOPT_NOBODY, false)
        easy.set(CURLOPT_UPLOAD, true)
        easy.set(CURLOPT_CUSTOMREQUEST, method.rawValue)
        easy.set(CURLOPT_INFILESIZE_LARGE, offT: reader.length ?? -1)
    }
}

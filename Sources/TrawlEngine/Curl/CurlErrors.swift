internal import CCurl

/// The one place where libcurl's result codes become `TrawlError`s.
enum CurlErrors {
    static func error(for code: CURLcode, transfer: Transfer, abortError: TrawlError?) -> TrawlError {
        let number = Int(code.rawValue)
        let curlText = transfer.easy?.errorMessage ?? ""
        let curlMessage = curlText.isEmpty ? String(cString: curl_easy_strerror(code)) : curlText
        let timeouts = transfer.request.timeouts
        func make(_ kind: TrawlError.Code, _ message: String, _ hint: String? = nil) -> TrawlError {
            transfer.makeError(code: kind, message, hint: hint, curlCode: number, curlMessage: curlMessage)
        }
        func make(_ kind: TrawlError.Code, _ message: String, remedy: TrawlError.Remedy) -> TrawlError {
            transfer.makeError(code: kind, message, remedy: remedy, curlCode: number, curlMessage: curlMessage)
        }

        // A callback stopped the transfer and said why.
        if let abortError, code == CURLE_WRITE_ERROR || code == CURLE_ABORTED_BY_CALLBACK
            || code == CURLE_READ_ERROR {
            var error = abortError
            error.curlCode = number
            error.curlMessage = curlMessage
            return error
        }

        // The proxy was what failed: the server was never reached, and "check that the server is up" would mislead.
        if let proxy = transfer.request.proxyInUse {
            // A proxy from the environment is the user's variable; one the client names is a setting (a remedy).
            let fromEnvironment = transfer.request.proxySetting == nil
            switch code {
            case CURLE_COULDNT_CONNECT:
                let message = "the proxy \(proxy) refused the connection or could not be reached"
                return fromEnvironment
                    ? make(.connectFailed, message,
                           "check that the proxy is up, or unset the proxy variable (http_proxy, https_proxy)")
                    : make(.connectFailed, message, remedy: .proxyUnreachable)
            case CURLE_COULDNT_RESOLVE_PROXY:
                let message = "the proxy's host name in \(proxy) could not be resolved"
                return fromEnvironment
                    ? make(.dnsFailed, message, "check the proxy variable (http_proxy, https_proxy)")
                    : make(.dnsFailed, message, remedy: .proxyAddress)
            case CURLE_RECV_ERROR where curlMessage.contains("CONNECT tunnel failed"):
                let answer = transfer.easy.map { $0.long(CURLINFO_HTTP_CONNECTCODE) } ?? 0
                let status = answer > 0 ? " (it answered \(answer) to CONNECT)" : ""
                let message = "the proxy \(proxy) refused to open a tunnel to the server\(status)"
                if answer == 407, !fromEnvironment { return make(.connectFailed, message, remedy: .proxyCredentials) }
                return make(.connectFailed, message,
                            answer == 407 ? "the proxy wants credentials: put them in the proxy variable's URL"
                                : "check the proxy's rules and credentials")
            default:
                break
            }
        }

        switch code {
        case CURLE_UNSUPPORTED_PROTOCOL where curlMessage.contains("HTTP/0.9"):
            // The scheme was fine; the answer had no status line (HTTP/0.9, another protocol, or a server that
            // speaks only cleartext HTTP/2).
            return make(.invalidBody, "the server's answer is not an HTTP response (no status line)",
                        remedy: .http2PriorKnowledge)
        case CURLE_UNSUPPORTED_PROTOCOL where curlMessage.hasPrefix("Protocol "):
            return make(.unsupportedScheme, "the scheme is not supported", "Trawl speaks only http and https")
        case CURLE_UNSUPPORTED_PROTOCOL:
            // Schemes are checked before sending: what libcurl refused is the status line ("Unsupported HTTP
            // version", "Unsupported response code").
            return make(.invalidBody, "the server's answer is not an HTTP response (a malformed status line)",
                        "the server or something in between is broken; check the URL and port")
        case CURLE_OUT_OF_MEMORY where !transfer.headEnded:
            // libcurl refuses a header line over CURL_MAX_HTTP_HEADER (100 KB) with nothing but "Out of memory",
            // which is not what happened: its code and text are left out of the message.
            return transfer.makeError(
                code: .tooLarge, "header too large: a response header line is over libcurl's limit of 100 KB",
                hint: "the server sent an absurd header; report it to the server's owner")
        case CURLE_RECV_ERROR where curlMessage.hasPrefix("Too large response headers"):
            return make(.tooLarge, "header too large: the response head is over libcurl's limit of 300 KB",
                        "the server sent absurd headers; report it to the server's owner")
        case CURLE_URL_MALFORMAT:
            return make(.invalidURL, "the URL is malformed", "check the URL's syntax and percent-encoding")
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return make(.dnsFailed, "the host name could not be resolved", "check the host name and DNS")
        case CURLE_COULDNT_CONNECT:
            return make(.connectFailed, "the connection was refused or could not be made",
                        "check that the server is up and the port is right")
        case CURLE_OPERATION_TIMEDOUT:
            if transfer.easy.map({ $0.offT(CURLINFO_CONNECT_TIME_T) == 0 }) ?? false,
               curlMessage.contains("onnect") || curlMessage.contains("Resolving") {
                let limit = timeouts.connect.map { "\($0)" } ?? "?"
                return make(.timeout, "could not connect within the connect timeout of \(limit)",
                            remedy: .connectTimeout)
            }
            let limit = timeouts.total.map { "\($0)" } ?? "?"
            return make(.timeout,
                        "the transfer did not finish within the total timeout of \(limit) "
                            + "(\(transfer.receivedBytes) body bytes received)",
                        remedy: .totalTimeout)
        case CURLE_PARTIAL_FILE:
            return make(.truncated,
                        "the body ended after \(transfer.receivedBytes) bytes, before the length the server announced",
                        "the connection closed early; retry the request")
        case CURLE_RECV_ERROR, CURLE_GOT_NOTHING:
            let what = code == CURLE_GOT_NOTHING
                ? "the server closed the connection without sending a response"
                : "receiving failed after \(transfer.receivedBytes) body bytes (connection reset or malformed data)"
            return make(.receiveFailed, what, "retry the request; if it persists the server or a proxy is broken")
        case CURLE_SEND_ERROR:
            return make(.sendFailed, "sending the request failed", "retry the request")
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM,
            CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH:
            return make(.tlsFailed, "the TLS handshake or certificate check failed", remedy: .caBundle)
        case CURLE_BAD_CONTENT_ENCODING:
            return make(.decodingFailed, "the body's Content-Encoding could not be decoded",
                        "the server sent corrupt compressed data; retry, or request it uncompressed")
        case CURLE_FILESIZE_EXCEEDED:
            return make(.tooLarge, "the body exceeded the size limit")
        case CURLE_WRITE_ERROR:
            return make(.transport, "the body could not be delivered")
        default:
            return make(.transport, "the transfer failed")
        }
    }

    static func multiError(_ code: CURLMcode, transfer: Transfer) -> TrawlError {
        transfer.makeError(
            code: .transport, "libcurl's multi handle refused the transfer",
            curlCode: Int(code.rawValue), curlMessage: String(cString: curl_multi_strerror(code)))
    }
}

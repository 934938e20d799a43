internal import CCurl

/// One libcurl easy handle and its error buffer. Handles are pooled by the loop and reset between
/// transfers; only the loop thread touches them.
final class EasyHandle {
    let raw: UnsafeMutableRawPointer
    private let errorBuffer: UnsafeMutablePointer<CChar>

    init?() {
        guard let raw = curl_easy_init() else { return nil }
        self.raw = raw
        errorBuffer = .allocate(capacity: Int(TRAWL_CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(TRAWL_CURL_ERROR_SIZE))
    }

    deinit {
        curl_easy_cleanup(raw)
        errorBuffer.deallocate()
    }

    /// Clears every option (connections, DNS and TLS session caches live in the multi handle and stay).
    func reset() {
        curl_easy_reset(raw)
        errorBuffer[0] = 0
        set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(errorBuffer))
    }

    /// The text libcurl wrote for the last failure, if any.
    var errorMessage: String {
        String(cString: errorBuffer)
    }

    func set(_ option: CURLoption, _ value: Int) {
        _ = trawl_curl_easy_setopt_long(raw, option, value)
    }

    func set(_ option: CURLoption, _ value: Bool) {
        _ = trawl_curl_easy_setopt_long(raw, option, value ? 1 : 0)
    }

    func set(_ option: CURLoption, offT value: Int64) {
        _ = trawl_curl_easy_setopt_off_t(raw, option, curl_off_t(value))
    }

    @discardableResult
    func set(_ option: CURLoption, _ value: String) -> Bool {
        trawl_curl_easy_setopt_string(raw, option, value) == CURLE_OK
    }

    func set(_ option: CURLoption, pointer: UnsafeMutableRawPointer?) {
        _ = trawl_curl_easy_setopt_pointer(raw, option, pointer)
    }

    func set(_ option: CURLoption, slist: UnsafeMutablePointer<curl_slist>?) {
        _ = trawl_curl_easy_setopt_slist(raw, option, slist)
    }

    func set(_ option: CURLoption, dataCallback: trawl_curl_data_callback) {
        _ = trawl_curl_easy_setopt_data_callback(raw, option, dataCallback)
    }

    func set(_ option: CURLoption, xferinfoCallback: trawl_curl_xferinfo_callback) {
        _ = trawl_curl_easy_setopt_xferinfo_callback(raw, option, xferinfoCallback)
    }

    func long(_ info: CURLINFO) -> Int {
        var value = 0
        _ = trawl_curl_easy_getinfo_long(raw, info, &value)
        return value
    }

    func offT(_ info: CURLINFO) -> Int64 {
        var value: curl_off_t = 0
        _ = trawl_curl_easy_getinfo_off_t(raw, info, &value)
        return Int64(value)
    }

    func string(_ info: CURLINFO) -> String? {
        var value: UnsafeMutablePointer<CChar>?
        guard trawl_curl_easy_getinfo_string(raw, info, &value) == CURLE_OK, let value else { return nil }
        return String(cString: value)
    }

    func microseconds(_ info: CURLINFO) -> Duration {
        .microseconds(offT(info))
    }
}

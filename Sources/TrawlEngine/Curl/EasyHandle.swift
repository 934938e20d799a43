internal import CCurl

/// One libcurl easy handle and its error buffer. Handles are pooled by the loop and reused without
/// `curl_easy_reset`: options that never change for a client are set once, and per-transfer options
/// are set when they differ from what the handle already holds (resetting and re-parsing everything
/// is a noticeable share of a small request). Only the loop thread touches them.
final class EasyHandle {
    let raw: UnsafeMutableRawPointer
    private let errorBuffer: UnsafeMutablePointer<CChar>
    /// The client-wide options have been set.
    var hasClientOptions = false
    /// The values this handle holds for per-transfer options (nil: not set yet), so that a transfer sets
    /// only what differs from the last one.
    var url: String?
    var bufferSize: Int?
    var acceptEncoding = false
    var noProgress: Int?
    var connectTimeoutMilliseconds: Int?
    var totalTimeoutMilliseconds: Int?
    /// The method last set up for a request without a body (nil after an upload).
    var bodilessMethod: HTTPMethod?
    /// The header list last set, when it was the client's shared one (per-transfer lists are always set).
    var sharedHeaderList: UnsafeMutablePointer<curl_slist>?
    /// The callbacks' user data and `CURLOPT_PRIVATE`, set once: a slot holding the current transfer
    /// (an unretained `Transfer`, or nil between transfers), so a new transfer costs one store, not five
    /// `curl_easy_setopt` calls.
    let context: UnsafeMutablePointer<UnsafeMutableRawPointer?>

    init?() {
        guard let raw = curl_easy_init() else { return nil }
        self.raw = raw
        errorBuffer = .allocate(capacity: Int(TRAWL_CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(TRAWL_CURL_ERROR_SIZE))
        context = .allocate(capacity: 1)
        context.initialize(to: nil)
    }

    deinit {
        curl_easy_cleanup(raw)
        errorBuffer.deallocate()
        context.deallocate()
    }

    /// Prepares for the next transfer: clears the error text and, on first use, points libcurl at it and at
    /// the context slot.
    func prepareForTransfer() {
        errorBuffer[0] = 0
        guard !hasClientOptions else { return }
        set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(errorBuffer))
        let slot = UnsafeMutableRawPointer(context)
        for option in [CURLOPT_PRIVATE, CURLOPT_WRITEDATA, CURLOPT_HEADERDATA, CURLOPT_READDATA, CURLOPT_XFERINFODATA] {
            set(option, pointer: slot)
        }
    }

    /// The text libcurl wrote for the last failure, if any.
    var errorMessage: String {
        String(cString: errorBuffer)
    }

    func set(_ option: CURLoption, _ value: Int) {
        _ = trawl_curl_easy_setopt_long(raw, option, value)
    }

    /// Sets a long option unless the handle already holds `value`, which `held` remembers.
    func set(_ option: CURLoption, _ value: Int, unlessHeld held: inout Int?) {
        guard held != value else { return }
        set(option, value)
        held = value
    }

    func set(_ option: CURLoption, _ value: Bool) {
        _ = trawl_curl_easy_setopt_long(raw, option, value ? 1 : 0)
    }

    func set(_ option: CURLoption, offT value: Int64) {
        _ = trawl_curl_easy_setopt_off_t(raw, option, curl_off_t(value))
    }

    @discardableResult
    func set(_ option: CURLoption, _ value: String?) -> Bool {
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

    func offT(_ info: CURLINFO) -> Int64 {
        var value: curl_off_t = 0
        _ = trawl_curl_easy_getinfo_off_t(raw, info, &value)
        return Int64(value)
    }

    func long(_ info: CURLINFO) -> Int {
        var value = 0
        _ = trawl_curl_easy_getinfo_long(raw, info, &value)
        return value
    }

    func string(_ info: CURLINFO) -> String? {
        var value: UnsafeMutablePointer<CChar>?
        guard trawl_curl_easy_getinfo_string(raw, info, &value) == CURLE_OK, let value else { return nil }
        return String(cString: value)
    }
}

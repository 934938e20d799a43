internal import CCurl

// libcurl's callbacks, as global functions so they are never actor-isolated (libcurl calls them on the
// loop thread). The user data pointer is an unretained `Transfer`, kept alive by the loop's live set;
// `_withUnsafeGuaranteedRef` avoids a retain/release pair per call.

func trawlWriteCallback(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ userdata: UnsafeMutableRawPointer?
) -> Int {
    guard let userdata else { return 0 }
    let bytes = UnsafeRawBufferPointer(start: data, count: size * count)
    return Unmanaged<Transfer>.fromOpaque(userdata)._withUnsafeGuaranteedRef { $0.receiveBody(bytes) }
}

func trawlHeaderCallback(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ userdata: UnsafeMutableRawPointer?
) -> Int {
    guard let userdata else { return 0 }
    let bytes = UnsafeRawBufferPointer(start: data, count: size * count)
    Unmanaged<Transfer>.fromOpaque(userdata)._withUnsafeGuaranteedRef { $0.receiveHeaderLine(bytes) }
    return size * count
}

func trawlReadCallback(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ userdata: UnsafeMutableRawPointer?
) -> Int {
    guard let userdata, let data else { return Int(TRAWL_CURL_READFUNC_ABORT) }
    let buffer = UnsafeMutableRawBufferPointer(start: data, count: size * count)
    return Unmanaged<Transfer>.fromOpaque(userdata)._withUnsafeGuaranteedRef { $0.sendBody(into: buffer) }
}

func trawlProgressCallback(
    _ userdata: UnsafeMutableRawPointer?, _ downloadTotal: curl_off_t, _ downloaded: curl_off_t,
    _ uploadTotal: curl_off_t, _ uploaded: curl_off_t
) -> Int32 {
    guard let userdata else { return 0 }
    Unmanaged<Transfer>.fromOpaque(userdata)._withUnsafeGuaranteedRef {
        $0.reportProgress(
            received: Int64(downloaded), expectedToReceive: Int64(downloadTotal),
            sent: Int64(uploaded), expectedToSend: Int64(uploadTotal))
    }
    return 0
}

internal import CCurl

// libcurl's callbacks, as global functions so they are never actor-isolated (libcurl calls them on the
// loop thread). The user data pointer is the easy handle's context slot, which holds an unretained
// `Transfer` kept alive by the loop's live set; `_withUnsafeGuaranteedRef` avoids a retain/release pair per call.

/// The transfer in a handle's context slot.
@inline(__always)
func currentTransfer(_ userdata: UnsafeMutableRawPointer?) -> Unmanaged<Transfer>? {
    guard let slot = userdata?.assumingMemoryBound(to: UnsafeMutableRawPointer?.self).pointee else { return nil }
    return Unmanaged<Transfer>.fromOpaque(slot)
}

func trawlWriteCallback(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ userdata: UnsafeMutableRawPointer?
) -> Int {
    guard let transfer = currentTransfer(userdata) else { return 0 }
    let bytes = UnsafeRawBufferPointer(start: data, count: size * count)
    return transfer._withUnsafeGuaranteedRef { $0.receiveBody(bytes) }
}

func trawlHeaderCallback(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ userdata: UnsafeMutableRawPointer?
) -> Int {
    guard let transfer = currentTransfer(userdata) else { return 0 }
    let bytes = UnsafeRawBufferPointer(start: data, count: size * count)
    let proceed = transfer._withUnsafeGuaranteedRef { $0.receiveHeaderLine(bytes) }
    return proceed ? size * count : 0
}

func trawlReadCallback(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ userdata: UnsafeMutableRawPointer?
) -> Int {
    guard let transfer = currentTransfer(userdata), let data else { return Int(TRAWL_CURL_READFUNC_ABORT) }
    let buffer = UnsafeMutableRawBufferPointer(start: data, count: size * count)
    return transfer._withUnsafeGuaranteedRef { $0.sendBody(into: buffer) }
}

func trawlProgressCallback(
    _ userdata: UnsafeMutableRawPointer?, _ downloadTotal: curl_off_t, _ downloaded: curl_off_t,
    _ uploadTotal: curl_off_t, _ uploaded: curl_off_t
) -> Int32 {
    guard let transfer = currentTransfer(userdata) else { return 0 }
    transfer._withUnsafeGuaranteedRef {
        $0.reportProgress(
            received: Int64(downloaded), expectedToReceive: Int64(downloadTotal),
            sent: Int64(uploaded), expectedToSend: Int64(uploadTotal))
    }
    return 0
}

extension Client {
    /// After a `416` without validators: a `HEAD` says whether the resource is still the one the partial file
    /// holds (same validator, same length). `.complete` only when it says so; anything else (another validator,
    /// another length, no answer) is `.restart`: downloading again is safe, keeping a changed file is not.
    static func confirmWhole(_ client: Client, _ request: Request, size: Int64, validator: String) async
        -> ResumeAnswer
    {
        var head = request
        head.method = .head
        head.body = nil
        head.headers.remove("Range")
        head.headers.remove("If-Range")
        guard let response = try? await client.send(head), (200..<300).contains(response.status) else {
            return .restart
        }
        let headers = response.head.headers
        let stored = ResumeAnswer.isETag(validator) ? headers["ETag"] : headers["Last-Modified"]
        let length = headers["Content-Length"].flatMap { Int64($0) }
        return stored == validator && length == size ? .complete : .restart
    }
}

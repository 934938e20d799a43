import Foundation
import Yams

/// `settings.cache` and `settings.on_not_modified`: conditional requests.
///
/// ```yaml
/// settings:
///   cache: jobs.cache          # the job's private response cache: ETag / Last-Modified per page
///   on_not_modified: skip      # a page answered 304 writes no items (default: write them again)
/// ```
extension JobFileReader {
    func cacheSetting(_ key: String, _ node: Node, _ field: String, into settings: inout JobSettings)
        throws(JobFileError)
    {
        let text = try string(node, field)
        if key == "cache" {
            guard !text.isEmpty else { throw error(node, field, "the cache directory is empty", hint: "name one") }
            settings.cache = text
            return
        }
        switch text {
        case "write": settings.skipNotModified = false
        case "skip": settings.skipNotModified = true
        default:
            throw error(
                node, field, "unknown value '\(text)'",
                hint: "write (a page answered 304 writes its stored items again) or skip (it writes none)")
        }
    }
}

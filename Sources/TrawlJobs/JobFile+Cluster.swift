import Yams

/// The job file's settings for running past one machine: `rate_store` (a shared rate budget).
extension JobFileReader {
    static let clusterSettingsKeys = ["rate_store"]

    /// Reads one of `clusterSettingsKeys` into `settings`.
    func clusterSetting(_ key: String, _ value: Node, into settings: inout JobSettings) throws(JobFileError) {
        let field = "settings.\(key)"
        switch key {
        case "rate_store":
            let text = try string(value, field)
            do {
                settings.rateStore = try RateStoreAddress.parse(text)
            } catch {
                throw self.error(value, field, error.message, hint: error.hint)
            }
        default: break
        }
    }
}

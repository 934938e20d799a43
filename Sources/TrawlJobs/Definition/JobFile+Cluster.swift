import Yams

/// The job file's settings for running past one machine: `rate_store` (a shared rate budget) and `adaptive`
/// (per-host concurrency that backs off on 429/503), `metrics_listen` (where `trawl fetch` serves its metrics).
extension JobFileReader {
    static let clusterSettingsKeys = ["rate_store", "adaptive", "metrics_listen"]

    /// Reads one of `clusterSettingsKeys` into `settings`.
    func clusterSetting(_ key: String, _ value: Node, into settings: inout JobSettings) throws(JobFileError) {
        let field = "settings.\(key)"
        switch key {
        case "rate_store":
            let text = try string(value, field)
            do {
                settings.rateStore = try RateStoreAddress.parse(text)
            } catch {
                throw self.error(value, field, error.message, hint: error.hint, code: error.code)
            }
        case "metrics_listen":
            let text = try string(value, field)
            do {
                settings.metricsListen = try MetricsAddress.parse(text)
            } catch {
                throw self.error(value, field, error.message, hint: error.hint, code: error.code)
            }
        default:
            guard case .scalar(let scalar) = value, let flag = Bool(scalar.string) else {
                throw self.error(value, field, "expected true or false, found \(kind(value))")
            }
            settings.adaptive = flag
        }
    }
}

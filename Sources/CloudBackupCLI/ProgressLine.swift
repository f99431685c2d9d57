import Foundation
import Networking
import Synchronization

/// A one-line progress display on a terminal, for transfers over 1 MiB (never in cron mail:
/// only when stderr is a terminal).
final class ProgressLine: Sendable {
    static let threshold = 1 << 20
    private let context: Context
    private let shown = Mutex<(verb: String, percent: Int)>(("", -1))

    init(context: Context) {
        self.context = context
    }

    func download(_ progress: TransferProgress) {
        show("downloading", progress.downloaded, progress.downloadTotal)
    }

    func upload(_ sent: Int, _ total: Int) {
        show("uploading", sent, total)
    }

    private func show(_ verb: String, _ done: Int, _ total: Int) {
        guard total > Self.threshold else { return }
        let percent = min(100, done * 100 / total)
        let changed = shown.withLock { shown in
            guard shown.verb != verb || shown.percent != percent else { return false }
            shown = (verb, percent)
            return true
        }
        guard changed else { return }
        let mebibytes = String(format: "%.1f", Double(total) / Double(1 << 20))
        context.writeError("\r\(verb) \(mebibytes) MiB: \(percent)%" + (percent == 100 ? "\n" : ""))
    }
}

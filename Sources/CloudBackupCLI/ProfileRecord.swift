import Foundation
import LocalFiles

/// A small record in the profile's folder: one JSON line, readable only by the user.
protocol ProfileRecord: Codable {}

extension ProfileRecord {
    func save(to path: String) throws(CLIError) {
        do {
            try LocalFile.writeAtomically(
                Array((JSONLine.encode(self) + "\n").utf8), to: path, mode: 0o600)
        } catch {
            throw CloudBackup.describe(error)
        }
    }

    /// nil when there is no record yet (or it is unreadable): every record can be done
    /// without, at the cost its user says.
    static func load(from path: String) -> Self? {
        guard let bytes = try? LocalFile.read(path, maxBytes: 1 << 16) else { return nil }
        return try? JSONDecoder().decode(Self.self, from: Data(bytes))
    }
}

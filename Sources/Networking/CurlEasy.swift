import CCurl

/// The one owner of a libcurl easy handle (`CURL *`).
///
/// Design: libcurl keeps raw pointers to some of what we hand it — the header list
/// (`CURLOPT_HTTPHEADER`), the request body (`CURLOPT_POSTFIELDS`), the callbacks' user
/// data and the error buffer — and reads them during `curl_easy_perform`. So all of those
/// are stored here, beside the handle, and freed in `deinit` together with it; nothing is
/// borrowed from a Swift value that might move. The handle itself is lent out only inside
/// `withHandle`, so no caller can keep it past the owner's life.
final class CurlEasy {
    private let handle: UnsafeMutableRawPointer
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private var body: UnsafeMutableRawBufferPointer?
    /// `CURLOPT_ERRORBUFFER`: libcurl writes a detailed message here on failure.
    private let errorBuffer: UnsafeMutablePointer<CChar>
    /// Where the callbacks put what arrives; its address is the callbacks' user data.
    let sink: ResponseSink

    init(sink: ResponseSink) throws(CurlError) {
        try CurlEasy.globalInit.get()
        guard let handle = curl_easy_init() else {
            throw CurlError(CURLE_FAILED_INIT, operation: "curl_easy_init")
        }
        self.handle = handle
        self.sink = sink
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
        try set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(errorBuffer))
    }

    deinit {
        curl_easy_cleanup(handle)
        curl_slist_free_all(headerList)
        body?.deallocate()
        errorBuffer.deallocate()
    }

    /// `curl_global_init` must run once before any handle exists; a global is initialised
    /// exactly once, thread-safely, on first use.
    private static let globalInit: Result<Void, CurlError> = {
        let code = cb_global_init_default()
        return code == CURLE_OK
            ? .success(()) : .failure(CurlError(code, operation: "curl_global_init"))
    }()

    /// Lends the raw handle for the duration of `body` only.
    func withHandle<T, E: Error>(_ body: (UnsafeMutableRawPointer) throws(E) -> T) throws(E) -> T {
        try body(handle)
    }

    func set(_ option: CURLoption, _ value: Int) throws(CurlError) {
        try CurlError.check(cb_easy_setopt_long(handle, option, value), "setopt \(option.rawValue)")
    }

    func set(_ option: CURLoption, _ value: Bool) throws(CurlError) {
        try set(option, value ? 1 : 0)
    }

    func set(_ option: CURLoption, offset value: Int) throws(CurlError) {
        try CurlError.check(
            cb_easy_setopt_off_t(handle, option, value), "setopt \(option.rawValue)")
    }

    /// libcurl copies string options, so the Swift string need not outlive the call.
    func set(_ option: CURLoption, _ value: String) throws(CurlError) {
        try CurlError.check(
            value.withCString { cb_easy_setopt_string(handle, option, $0) },
            "setopt \(option.rawValue)")
    }

    func set(_ option: CURLoption, pointer value: UnsafeMutableRawPointer?) throws(CurlError) {
        try CurlError.check(
            cb_easy_setopt_pointer(handle, option, value), "setopt \(option.rawValue)")
    }

    func set(_ option: CURLoption, function: curl_write_callback) throws(CurlError) {
        try CurlError.check(
            cb_easy_setopt_write_function(handle, option, function), "setopt \(option.rawValue)")
    }

    func setProgressFunction(_ function: curl_xferinfo_callback) throws(CurlError) {
        try CurlError.check(
            cb_easy_setopt_xferinfo_function(handle, function), "setopt CURLOPT_XFERINFOFUNCTION")
    }

    /// `CURLOPT_HTTPHEADER`: the list stays alive here until the handle is freed.
    func setHeaders(_ lines: [String]) throws(CurlError) {
        var list: UnsafeMutablePointer<curl_slist>?
        for line in lines {
            guard let appended = curl_slist_append(list, line) else {
                curl_slist_free_all(list)
                throw CurlError(CURLE_OUT_OF_MEMORY, operation: "curl_slist_append")
            }
            list = appended
        }
        curl_slist_free_all(headerList)
        headerList = list
        try set(CURLOPT_HTTPHEADER, pointer: UnsafeMutableRawPointer(list))
    }

    /// `CURLOPT_POSTFIELDS` is not copied by libcurl: the bytes live here until `deinit`.
    func setBody(_ bytes: [UInt8]) throws(CurlError) {
        let storage = UnsafeMutableRawBufferPointer.allocate(
            byteCount: max(bytes.count, 1), alignment: 1)
        storage.copyBytes(from: bytes)
        body?.deallocate()
        body = storage
        try set(CURLOPT_POSTFIELDSIZE_LARGE, offset: bytes.count)
        try set(CURLOPT_POSTFIELDS, pointer: storage.baseAddress)
    }

    /// Runs the transfer; on failure the error carries libcurl's detailed message when it
    /// wrote one.
    func perform() throws(CurlError) {
        errorBuffer[0] = 0
        let code = curl_easy_perform(handle)
        guard code != CURLE_OK else { return }
        let detail = String(cString: errorBuffer)
        throw CurlError(code, operation: detail.isEmpty ? "perform" : detail)
    }

    func info(_ info: CURLINFO) throws(CurlError) -> Int {
        var value = 0
        try CurlError.check(cb_easy_getinfo_long(handle, info, &value), "getinfo \(info.rawValue)")
        return value
    }
}

/// What one transfer has received so far; the write, header and progress callbacks find it
/// through their user-data pointer.
final class ResponseSink {
    var body: [UInt8] = []
    var headers: [(name: String, value: String)] = []
    let maxBytes: Int
    private(set) var exceededLimit = false
    let progress: (@Sendable (TransferProgress) -> Void)?

    init(maxBytes: Int, progress: (@Sendable (TransferProgress) -> Void)?) {
        self.maxBytes = maxBytes
        self.progress = progress
    }

    /// Returns how many bytes were taken; fewer than offered makes libcurl stop with
    /// `CURLE_WRITE_ERROR`, which is how a body over the cap ends the transfer even when
    /// the server sent no `Content-Length` (where `CURLOPT_MAXFILESIZE_LARGE` cannot act).
    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard body.count + bytes.count <= maxBytes else {
            exceededLimit = true
            return 0
        }
        body.append(contentsOf: bytes)
        return bytes.count
    }

    /// One raw header line. A status line starts a new header block: an interim answer
    /// (`100 Continue`) must not leave its headers in the final response.
    func receiveHeader(_ bytes: UnsafeRawBufferPointer) {
        let line = String(decoding: bytes, as: UTF8.self)
        if line.hasPrefix("HTTP/") {
            headers.removeAll()
            return
        }
        guard let colon = line.firstIndex(of: ":") else { return }
        let name = line[..<colon].trimmingSpaces
        let value = line[line.index(after: colon)...].trimmingSpaces
        headers.append((name: String(name), value: String(value)))
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        guard let first = firstIndex(where: { !$0.isWhitespace }),
            let last = lastIndex(where: { !$0.isWhitespace })
        else { return "" }
        return self[first...last]
    }
}

import RawbleKernel

extension CLIError {
    /// A kernel failure as one line (its description names the fix) and its class's status.
    init(kernel error: KernelError) {
        let status: ExitStatus = switch error {
        case .noBluetoothInKernel, .noAdapter, .noSuchAdapter, .rfkillBlocked, .adapterDown: .unavailable
        case .adapterDownWithoutPermission, .missingCapability: .permission
        case .connectTimeout: .timeout
        case .connectFailed: .peerError
        case .userChannelBusy, .adapterRemoved, .system: .transport
        }
        self.init(status, error.description)
    }
}

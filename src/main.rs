fn main() -> std::process::ExitCode {
    staticfx::cli::main()
}

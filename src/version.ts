// The tool version written into .vlc manifests and printed by --version.
export const VERSION = '0.1.0';

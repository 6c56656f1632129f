export class BootstrapTokenResponse {
  bootstrapToken!: string;
}

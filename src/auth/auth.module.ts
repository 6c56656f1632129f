import { Module } from '@nestjs/common';
import { AuthGuard } from './auth.guard';
import { CredentialRepository } from './credential.repository';
import { CredentialService } from './credential.service';
import { PlayerSessionService } from './player-session.service';
import { ServerSessionCache } from './server-session.cache';
import { ServerSessionService } from './server-session.service';
import { SessionReadService } from './session-read.service';
import { SessionRepository } from './session.repository';
import { TokenService } from './token.service';
import { UploadSessionRule } from './upload-session.rule';

@Module({
  providers: [
    TokenService,
    CredentialRepository,
    SessionRepository,
    ServerSessionCache,
    CredentialService,
    ServerSessionService,
    PlayerSessionService,
    SessionReadService,
    UploadSessionRule,
    AuthGuard,
  ],
  exports: [
    CredentialService,
    ServerSessionService,
    PlayerSessionService,
    SessionReadService,
    UploadSessionRule,
    AuthGuard,
    TokenService,
  ],
})
export class AuthModule {}

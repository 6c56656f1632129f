import { Module } from '@nestjs/common';
import { AuthController } from './auth.controller';
import { AuthGuard } from './auth.guard';
import { AuthService } from './auth.service';
import { CredentialRepository } from './credential.repository';
import { ServerSessionCache } from './server-session.cache';
import { SessionRepository } from './session.repository';
import { TokenService } from './token.service';

@Module({
  controllers: [AuthController],
  providers: [TokenService, CredentialRepository, SessionRepository, ServerSessionCache, AuthService, AuthGuard],
  exports: [AuthService, TokenService, AuthGuard],
})
export class AuthModule {}

import { Global, Module } from '@nestjs/common';
import { AuditController } from './audit.controller';
import { AuditRepository } from './audit.repository';
import { AuditService } from './audit.service';

/**
 * The admin audit log: @Audited handlers get a row from AuditInterceptor; GET /admin/audit reads
 * it. Knows no feature module. Global: @Audited binds AuditInterceptor to a route of any module,
 * and Nest builds the interceptor in that module, injecting AuditService exported here.
 */
@Global()
@Module({
  controllers: [AuditController],
  providers: [AuditRepository, AuditService],
  exports: [AuditService],
})
export class AuditModule {}

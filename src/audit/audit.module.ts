import { Global, Module } from '@nestjs/common';
import { AuditController } from './audit.controller';
import { AuditInterceptor } from './audit.interceptor';
import { AuditRepository } from './audit.repository';
import { AuditService } from './audit.service';

/**
 * The admin audit log: @Audited handlers get a row from AuditInterceptor; GET /admin/audit reads
 * it. Knows no feature module. Global: @Audited binds AuditInterceptor to a route of any module,
 * and Nest builds it in that module, from AuditService exported here.
 */
@Global()
@Module({
  controllers: [AuditController],
  providers: [AuditRepository, AuditService, AuditInterceptor],
  exports: [AuditService, AuditInterceptor],
})
export class AuditModule {}
